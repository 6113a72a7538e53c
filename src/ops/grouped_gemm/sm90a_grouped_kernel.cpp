#include "sm90a_grouped_kernel.hpp"

#include <memory>
#include <optional>

#include "grouped_store.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {

std::uint32_t imm(std::int64_t v) { return static_cast<std::uint32_t>(v); }

constexpr int kTileM = GroupedSm90aConfig::kTileM, kTileK = GroupedSm90aConfig::kTileK;
// A K-major tile's 64 bf16 of K make one 128-byte row, swizzled by 128 bytes
// in 8-row atoms (the wgmma descriptor's SBO; LBO unused, encoded 16).
constexpr std::uint32_t kRow = kTileK * 2, kAtom = 8 * kRow;

// The carve-up of the kernel's shared memory.
struct Smem {
  std::uint32_t a, b, a_stage, b_stage, full, empty, table, bytes;
};
Smem smem_of(const GroupedGemmProblem& p, const GroupedSm90aConfig& c) {
  Smem m{};
  m.a_stage = kTileM * kRow;
  m.b_stage = static_cast<std::uint32_t>(c.tile_n) * kRow;
  tile::SharedLayout layout;
  m.a = layout.ring(m.a_stage, c.stages);
  m.b = layout.ring(m.b_stage, c.stages);
  m.full = layout.mbarriers(c.stages);
  m.empty = layout.mbarriers(c.stages);
  m.table = layout.buffer(static_cast<std::uint32_t>(sm90a_grouped_schedule(p, c).table_bytes()), 4);
  m.bytes = layout.launch_bytes();
  return m;
}

// The group schedule as the template's work source: item (row tile of a
// group, N tile) with tile.m0 its first row, tile.n0 its first column,
// tile.batch the group and extra[0] the group's end row; all its k-blocks.
class GroupedTiles final : public tile::WorkSource {
 public:
  GroupedTiles(Kernel& k, const GroupScheduleOptions& o, const Reg& offsets, const Reg& m, const Reg& tid,
               const Reg& table, int tile_n, std::int64_t k_blocks)
      : k_(k), schedule_(k, o, offsets, m, tid, table), tile_n_(tile_n), k_blocks_(k_blocks) {}

  const GroupSchedule& schedule() const { return schedule_; }

  void for_each(const std::function<void(const tile::WorkItem&)>& body, const Reg* offset,
                int stride) const override {
    if (offset || stride != 1)
      throw TileError("the grouped GEMM's work source serves the cooperative schedule only (no offset, stride 1)");
    schedule_.for_each([&](const GroupWork& w) {
      // Designated: the end row must land in `extra` whatever fields WorkItem gains.
      tile::WorkItem item{.tile = {w.begin + w.row_tile * imm(kTileM), w.col * imm(tile_n_), w.group, w.unit},
                          .kb0 = k_.mov(u32, 0u),
                          .kb1 = k_.mov(u32, imm(k_blocks_)),
                          .extra = {w.end}};
      body(item);
    });
  }

 private:
  Kernel& k_;
  GroupSchedule schedule_;
  int tile_n_;
  std::int64_t k_blocks_;
};

class GroupedDesign final : public tile::WarpSpecializedDesign {
 public:
  GroupedDesign(const GroupedGemmProblem& p, const GroupedSm90aConfig& c)
      : p_(p), c_(c), smem_(smem_of(p, c)), k_(kSm90aGroupedKernel, Target::sm_90a) {}

  Kernel& kernel() override { return k_; }

  tile::WarpSpecializedConfig config() const override {
    tile::WarpSpecializedConfig w;
    w.consumers = 2;
    w.stages = c_.stages;
    w.full_barriers = smem_.full;
    w.empty_barriers = smem_.empty;
    w.stage_bytes = smem_.a_stage + smem_.b_stage;
    return w;
  }

  void params(tile::WarpSpecialized&) override {
    map_a_p_ = k_.param_bytes("map_a", 128, 64);
    map_b_p_ = k_.param_bytes("map_b", 128, 64);
    d_ = k_.param_ptr("D", 4);
    offsets_ = k_.param_ptr("offsets", 4);
    m_ = k_.param(u32, "M");
  }

  void prologue(tile::WarpSpecialized& ws) override {
    base_ = ws.smem_base();
    tid_ = ws.tid();
    map_a_ = k_.param_generic_address(map_a_p_);
    map_b_ = k_.param_generic_address(map_b_p_);
  }

  void initialize(tile::WarpSpecialized&) override {
    k_.prefetch_tensormap(map_a_);
    k_.prefetch_tensormap(map_b_);
  }

  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized&) override {
    auto source = std::make_unique<GroupedTiles>(k_, sm90a_grouped_schedule(p_, c_), offsets_, m_, tid_,
                                                 base_ + imm(smem_.table), c_.tile_n,
                                                 (p_.k + kTileK - 1) / kTileK);
    source_ = source.get();
    return source;
  }

  // A's 128 rows from the tile's first (TMA zero-fills past M; rows past
  // the group's end are never stored) and the group's B tile.
  void load(const tile::LoadStep& s) override {
    const tile::Tile& t = s.item.tile;
    Reg kx = s.kb << 6;
    const Reg& stage = s.state.stage();
    k_.tma_load(at(base_ + imm(smem_.a) + stage * imm(smem_.a_stage)), map_a_, {kx, t.m0, 0u}, at(s.full));
    k_.tma_load(at(base_ + imm(smem_.b) + stage * imm(smem_.b_stage)), map_b_, {kx, t.n0, t.batch}, at(s.full));
  }

  // The accumulators (64 rows a warpgroup), stage 0's descriptors, and the
  // rows past the last group zeroed.
  void consumer_setup(tile::WarpSpecialized& ws) override {
    cw_ = ws.warpgroup();
    acc_ = k_.regs(f32, c_.tile_n / 2, "acc");
    desc_a0_ = tile::warpgroup::smem_descriptor(k_, base_ + imm(smem_.a) + cw_ * imm(64 * kRow), 16, kAtom);
    desc_b0_ = tile::warpgroup::smem_descriptor(k_, base_ + imm(smem_.b), 16, kAtom);
    zero_rows_past_end();
  }

  int compute(const tile::ComputeStep& s) override {
    const tile::warpgroup::KBlock block{.ab = p_.a_dtype == DType::f16 ? f16 : bf16,
                                        .k_steps = kTileK / 16, .a_step = 32, .b_step = 32};
    Reg a_offset = k_.reg(u64), b_offset = k_.reg(u64);
    k_.cvt(a_offset, s.state.stage() * imm(smem_.a_stage >> 4));
    k_.cvt(b_offset, s.state.stage() * imm(smem_.b_stage >> 4));
    tile::warpgroup::mma_k_block(k_, block, acc_, a_offset + desc_a0_, b_offset + desc_b0_, s.accumulate());
    return 1;
  }

  // The warpgroup's 64 rows of the tile from its registers: register i of
  // a thread holds row 16·warp + lane/4 + 8·((i/2) % 2) and column
  // 8·(i/4) + 2·(lane%4) + i%2 (PTX ISA 9.7.15.5.1.1.1); stored where the
  // row is inside the group and the column inside N.
  void finish(const tile::WorkItem& w) override {
    const int bytes = runtime::bits(p_.d_dtype) / 8;
    const bool pairs = p_.d.ld % 2 == 0;
    Reg lane = tid_ & 31u;
    Reg row0 = w.tile.m0 + cw_ * 64u + (((tid_ >> 5) & 3u) << 4) + (lane >> 2);
    Reg col0 = w.tile.n0 + ((lane & 3u) << 1);
    Reg at_row = k_.reg(u64), at_col = k_.reg(u64);
    k_.mul_wide(at_row, row0, imm(p_.d.ld * bytes));
    k_.mul_wide(at_col, col0, imm(bytes));
    Reg lane_d = d_ + at_row + at_col;
    for (int h = 0; h < 2; ++h) {
      Pred row_in = (row0 + imm(8 * h)) < w.extra[0];
      for (int j = 0; j < c_.tile_n / 8; ++j) {
        const std::size_t i = static_cast<std::size_t>(4 * j + 2 * h);
        Reg address = lane_d + Src(static_cast<std::uint64_t>((8 * h * p_.d.ld + 8 * j) * bytes));
        store_d_pair(k_, p_.d_dtype, address, acc_[i], acc_[i + 1], row_in && ((col0 + imm(8 * j)) < imm(p_.n)),
                     row_in && ((col0 + imm(8 * j + 1)) < imm(p_.n)), pairs);
      }
    }
  }

 private:
  // Rows [end of the last group, M) of D: zeros, element by element, the
  // consumer threads of every CTA taking every (CTAs x 256)-th.
  void zero_rows_past_end() {
    const int bytes = runtime::bits(p_.d_dtype) / 8;
    Reg first_row = source_->schedule().rows_end();
    Reg count = (m_ - first_row) * imm(p_.n);
    Reg start = k_.sreg(SReg::ctaid_x) * 256u + tid_;
    Reg step = k_.sreg(SReg::nctaid_x) * 256u;
    k_.for_range(start, count, step, [&](Reg e) {
      Reg row = k_.div(e, imm(p_.n));
      Reg col = e - row * imm(p_.n);
      Reg at_row = k_.reg(u64), at_col = k_.reg(u64);
      k_.mul_wide(at_row, first_row + row, imm(p_.d.ld * bytes));
      k_.mul_wide(at_col, col, imm(bytes));
      Reg address = d_ + at_row + at_col;
      if (bytes == 4)
        k_.st(Space::global, b32, at(address), 0u);
      else
        k_.st(Space::global, b16, at(address), k_.mov(b16, 0));
    });
  }

  const GroupedGemmProblem& p_;
  GroupedSm90aConfig c_;
  Smem smem_;
  Kernel k_;
  const GroupedTiles* source_ = nullptr;
  ParamRef map_a_p_, map_b_p_;
  Reg map_a_, map_b_, d_, offsets_, m_, base_, tid_, cw_, desc_a0_, desc_b0_;
  Regs acc_;
};

}  // namespace

std::string GroupedSm90aConfig::describe() const {
  return std::to_string(kTileM) + "x" + std::to_string(tile_n) + "x" + std::to_string(kTileK) + " s" +
         std::to_string(stages);
}

GroupScheduleOptions sm90a_grouped_schedule(const GroupedGemmProblem& p, const GroupedSm90aConfig& c) {
  GroupScheduleOptions o;
  o.groups = p.groups;
  o.ragged_rows = true;
  o.rows_per_tile = kTileM;
  o.units_per_row = (p.n + c.tile_n - 1) / c.tile_n;
  o.tail_units = false;  // the consumers zero those rows
  // The dense sm90a GEMM's raster (tile::TileSchedulerOptions::group_rows):
  // at prefill (mixtral 8192 tokens: 16 row tiles x 56 N tiles an expert)
  // row-major order had the 132 CTAs at once span ~2.4 row tiles and all 56
  // of B's panels, so B came from DRAM again for every ~2.4 row tiles.
  o.band_rows = 16;
  return o;
}

std::uint32_t sm90a_grouped_shared_bytes(const GroupedGemmProblem& p, const GroupedSm90aConfig& c) {
  return smem_of(p, c).bytes;
}

std::vector<std::string> sm90a_grouped_refusals(const GroupedGemmProblem& p) {
  std::vector<std::string> why;
  if (p.packed_b || p.scaled_a || p.amax)
    why.push_back("block-scaled operands or amax: the sm90a grouped kernel multiplies bf16 or f16");
  if (p.form != GroupedForm::ragged_m) why.push_back("ragged K: the sm90a grouped kernel runs ragged M (the sm80 kernel takes it)");
  if (!p.a.cols_contiguous && p.m > 1) why.push_back("A is m-major: the sm90a grouped kernel loads K-major A tiles");
  if (p.b.cols_contiguous && p.n > 1)
    why.push_back("B's N is contiguous: the sm90a grouped kernel loads K-major B tiles (B (G, K, N) with K of stride 1)");
  if (p.m > (std::int64_t{1} << 31) - 1 || p.n > (std::int64_t{1} << 31) - 1 || p.k > (std::int64_t{1} << 31) - 1)
    why.push_back("M, N or K above 2^31 - 1: TMA coordinates are signed 32-bit (PTX ISA 9.7.9.25.5.1)");
  return why;
}

ptx::Module build_sm90a_grouped(const GroupedGemmProblem& p, const GroupedSm90aConfig& c) {
  if ((c.tile_n != 64 && c.tile_n != 128 && c.tile_n != 256) || c.stages < 2 || c.stages > 8 ||
      sm90a_grouped_shared_bytes(p, c) > 227 * 1024)
    throw OpsError("sm90a grouped kernel: configuration " + c.describe() + " needs " +
                   std::to_string(sm90a_grouped_shared_bytes(p, c)) +
                   " bytes of shared memory; it takes tile_n 64, 128 or 256 and 2-8 stages within 227 KB");
  GroupedDesign design(p, c);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
