#include "sm90a_kernel.hpp"

#include <functional>
#include <optional>
#include <utility>

#include "sm90a_epilogue.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/tile_scheduler.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {

using namespace dsl;

namespace {

constexpr std::uint32_t kAtom = 8 * kSm90aRow;  // 8 rows: the swizzle pattern's repeat
constexpr std::uint32_t kRow = kSm90aRow;
// An MN-major box of `cols` 16-bit elements by 64 K rows, and its 8-K-row
// atom (the wgmma descriptor's LBO and SBO for such a tile).
std::uint32_t mn_box_bytes(int cols) { return static_cast<std::uint32_t>(cols) * 2 * 64; }
std::uint32_t mn_atom_bytes(int cols) { return static_cast<std::uint32_t>(cols) * 2 * 8; }
// Work units (a cluster's tiles) per group along M of the grouped order:
// the CTAs running at once share A rows and B columns in L2.
constexpr int kGroupRows = 16;

// The GEMM as a design of the warp-specialized template
// (tile/warp_specialized.hpp): the template runs the roles, the pipeline,
// the persistent loop over the tile scheduler (cooperative, ping-pong,
// stream-K) and the clusters; the design loads A's and B's tiles of a
// k-block with TMA, multiplies a stage with wgmma and stores a finished
// tile through shared memory with TMA (sm90a_epilogue.hpp).
class Gemm final : public tile::WarpSpecializedDesign {
 public:
  explicit Gemm(const Sm90aSpec& s) : s_(s), smem_(sm90a_smem(s)), k_(s.name(), Target::sm_90a) {}
  Kernel& kernel() override { return k_; }

  tile::WarpSpecializedConfig config() const override {
    tile::WarpSpecializedConfig c{.consumers = s_.consumers,
                                  .schedule = s_.pingpong ? tile::ConsumerSchedule::pingpong
                                                          : tile::ConsumerSchedule::cooperative,
                                  .stages = s_.stages,
                                  .full_barriers = smem_.full,
                                  .empty_barriers = smem_.empty,
                                  // Only a_load_rows of A's tile arrive (the rest of its stage is not loaded).
                                  .stage_bytes = s_.a_load_rows() * kRow + smem_.b_stage,
                                  .cluster_m = s_.cluster_m,
                                  .cluster_n = s_.cluster_n};
    // Stream-K stages the partial sums it adds through the epilogue's buffer.
    if (s_.stream_k)
      c.stream_k = {static_cast<std::uint32_t>(s_.tile_m() * s_.tile_n * 4), smem_.epilogue,
                    smem_.epilogue_per_consumer};
    return c;
  }

  void params(tile::WarpSpecialized& ws) override {
    ws_ = &ws;
    map_a_p_ = k_.param_bytes("map_a", 128, 64);
    map_b_p_ = k_.param_bytes("map_b", 128, 64);
    map_d_p_ = k_.param_bytes("map_d", 128, 64);
    if (s_.has_c) {
      out_.c = k_.param_ptr("C", runtime::bits(s_.d) / 8);
      out_.c_rs = k_.param(u64, "c_row_stride");
      out_.c_cs = k_.param(u64, "c_col_stride");
      out_.c_bs = k_.param(u64, "c_batch_stride");
    }
    if (sm90a_tail_cols(s_)) {
      out_.d = k_.param_ptr("D", runtime::bits(s_.d) / 8);
      out_.d_rs = k_.param(u64, "d_row_stride");
      out_.d_bs = k_.param(u64, "d_batch_stride");
    }
    out_.m = k_.param(u32, "M");
    out_.n = k_.param(u32, "N");
    kdim_ = k_.param(u32, "K");
    l_ = k_.param(u32, "L");
    out_.alpha = k_.param(f32, "alpha");
    if (s_.has_c) out_.beta = k_.param(f32, "beta");
    if (s_.amax) amax_ = k_.param(u64, "amax");
  }

  void prologue(tile::WarpSpecialized& ws) override {
    base_ = ws.smem_base();
    epilogue_barriers_ = ws.warpgroup_barriers(128);
    map_a_ = k_.param_generic_address(map_a_p_);
    map_b_ = k_.param_generic_address(map_b_p_);
    out_.map_d = k_.param_generic_address(map_d_p_);
    epilogue_.emplace(k_, s_, smem_, out_, base_, ws.tid(), *epilogue_barriers_);
  }

  void initialize(tile::WarpSpecialized&) override {
    for (const Reg& map : {map_a_, map_b_, out_.map_d}) k_.prefetch_tensormap(map);
  }

  // Work units are a cluster's tiles, CTA rank r of a cluster taking tile
  // (r % cluster_m, r / cluster_m) of its unit, in groups of kGroupRows
  // units along M; with stream_k, the last units split by k-blocks between
  // CTAs, whose partial sums the template adds (tile/stream_k_reduction.hpp).
  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized&) override {
    auto sched = std::make_unique<tile::TileScheduler>(
        k_,
        tile::TileSchedulerOptions{.tile_m = s_.tile_m(), .tile_n = s_.tile_n, .tile_k = kSm90aTileK,
                                   .cluster_m = s_.cluster_m, .cluster_n = s_.cluster_n,
                                   .group_rows = kGroupRows, .stream_k = s_.stream_k},
        out_.m, out_.n, kdim_, l_);
    sched_ = sched.get();
    return sched;
  }

  // A's and B's tiles of one k-block, each CTA of a cluster loading its
  // share of the tiles it shares and multicasting it to the others.
  void load(const tile::LoadStep& s) override {
    const tile::Tile& t = s.item.tile;
    const Reg& stage = s.state.stage();
    Reg kx = s.kb << 6;
    load_share(map_a_, base_ + smem_.a + stage * smem_.a_stage, t.m0, s_.a_load_rows(), s_.a_k_major, 64,
               sched_->rank_n(), s_.cluster_n, kx, t.batch, s.full, ws_->row_multicast());
    load_share(map_b_, base_ + smem_.b + stage * smem_.b_stage, t.n0, s_.tile_n, s_.b_k_major, s_.b_box_cols(),
               sched_->rank_m(), s_.cluster_m, kx, t.batch, s.full, ws_->column_multicast());
  }

  // Cooperative: the warpgroups share each tile, 64 rows each (rows
  // 64·cw..). Ping-pong: each takes whole tiles, 64 or 128 rows as one or
  // two m64 accumulators. K-major tiles are 8-row atoms of 128-byte rows
  // (SBO = one atom, LBO unused: encoded as 16); MN-major tiles are boxes
  // of 64 K rows, 64 elements wide (32 for B in the 64-byte swizzle:
  // Sm90aSpec::b_box_cols), LBO = the next box along M/N, SBO = the next 8
  // K rows.
  void consumer_setup(tile::WarpSpecialized& ws) override {
    epilogue_->begin();
    cw_ = ws.warpgroup();
    leader_ = ws.leader();
    const int halves = s_.pingpong ? s_.wg_rows / 64 : 1;
    for (int h = 0; h < halves; ++h) accs_.push_back(k_.regs(f32, s_.tile_n / 2, h == 0 ? "acc" : "acc_hi"));
    rows0_ = s_.pingpong ? k_.mov(u32, 0) : cw_ * 64;  // the warpgroup's first row in the tile
    for (int h = 0; h < halves; ++h) {
      Reg rows = rows0_ + 64 * h;
      Reg a_smem = base_ + smem_.a + (s_.a_k_major ? rows * kRow : (rows >> 6) * mn_box_bytes(64));
      desc_a0_.push_back(tile::warpgroup::smem_descriptor(k_, a_smem, s_.a_k_major ? 16 : mn_box_bytes(64), kAtom));
    }
    Reg b_smem = base_ + smem_.b;
    desc_b0_ = s_.b_k_major ? tile::warpgroup::smem_descriptor(k_, b_smem, 16, kAtom)
                            : tile::warpgroup::smem_descriptor(k_, b_smem, mn_box_bytes(s_.b_box_cols()),
                                                               mn_atom_bytes(s_.b_box_cols()), s_.b_swizzle());
  }

  // One k-block: each accumulator's k16 steps on the stage's A and B tiles
  // (a commit group each). A k16 step moves 32 bytes along a K-major row,
  // or 16 K rows (two 8-row atoms) down an MN-major box.
  int compute(const tile::ComputeStep& s) override {
    const tile::warpgroup::KBlock block{.ab = sm90a_dsl_type(s_.ab),
                                        .a_major = s_.a_k_major ? WgmmaMajor::k : WgmmaMajor::mn,
                                        .b_major = s_.b_k_major ? WgmmaMajor::k : WgmmaMajor::mn,
                                        .k_steps = kSm90aTileK / 16,
                                        .a_step = s_.a_k_major ? 32 : 2 * kAtom,
                                        .b_step = s_.b_k_major ? 32 : 2 * mn_atom_bytes(s_.b_box_cols())};
    Reg a_offset = k_.reg(u64), db = k_.reg(u64);
    k_.cvt(a_offset, s.state.stage() * (smem_.a_stage >> 4));
    k_.cvt(db, s.state.stage() * (smem_.b_stage >> 4));
    k_.add(db, db, desc_b0_);
    const Pred& accumulate = s.accumulate();
    for (std::size_t h = 0; h < accs_.size(); ++h)
      tile::warpgroup::mma_k_block(k_, block, accs_[h], a_offset + desc_a0_[h], db, accumulate);
    return static_cast<int>(accs_.size());
  }

  void finish(const tile::WorkItem& w) override { epilogue_->store(accs_, w.tile, rows0_, cw_, leader_); }
  void consumer_teardown(tile::WarpSpecialized&) override { epilogue_->end(leader_, amax_); }

  // Stream-K: the accumulators, staged through the epilogue's buffer once
  // the last tile's store has read it.
  const Regs& partial_sums() const override { return accs_[0]; }
  void acquire_staging(tile::WarpSpecialized&) override {
    k_.if_then(leader_, [&] { k_.bulk_wait_group_read(0); });
    epilogue_barriers_->of(cw_).sync();
  }

 private:
  // Share `part` of `parts` of one operand tile, `rows` of M or N by 64 of
  // K, multicast to the CTAs of `mask` when given: K-major as a box of rows
  // / parts x 64, MN-major as boxes of box_cols along M/N by 64 K rows,
  // rows / box_cols / parts of them.
  void load_share(const Reg& map, const Reg& dst, const Reg& row0, int rows, bool k_major, int box_cols,
                  const Reg& part, int parts, const Reg& kx, const Reg& batch, const Reg& full,
                  const std::optional<Src>& mask) {
    if (k_major) {
      Reg first = part * (rows / parts);
      k_.tma_load(at(dst + first * kRow), map, {kx, row0 + first, batch}, at(full), mask);
      return;
    }
    const int boxes = rows / box_cols / parts;
    for (int i = 0; i < boxes; ++i) {
      Reg box = part * boxes + i;
      k_.tma_load(at(dst + box * mn_box_bytes(box_cols)), map, {row0 + box * box_cols, kx, batch}, at(full), mask);
    }
  }

  Sm90aSpec s_;
  Sm90aSmem smem_;
  Kernel k_;
  tile::WarpSpecialized* ws_ = nullptr;
  const tile::TileScheduler* sched_ = nullptr;
  ParamRef map_a_p_, map_b_p_, map_d_p_;
  Reg map_a_, map_b_, kdim_, l_, amax_, base_;
  Sm90aOutput out_;  // D's and C's parameters
  std::optional<tile::NamedBarrierSet> epilogue_barriers_;  // each consumer warpgroup's epilogue
  std::optional<Sm90aEpilogue> epilogue_;
  // The consumers': warpgroup, first thread, accumulators, first row in the
  // tile, wgmma descriptors of stage 0.
  Reg cw_, rows0_, desc_b0_;
  Pred leader_;
  std::vector<Regs> accs_;
  std::vector<Reg> desc_a0_;
};

}  // namespace

std::string Sm90aSpec::name() const {
  return "gemm_sm90a_" + std::string(runtime::name(ab)) + "_" + std::string(runtime::name(d)) + "_" +
         (a_k_major ? "ak" : "am") + (b_k_major ? "bk" : "bn") + "_" + std::to_string(tile_m()) + "x" +
         std::to_string(tile_n) + "_s" + std::to_string(stages) + (pingpong ? "_pingpong" : "") +
         (cluster_size() > 1 ? "_c" + std::to_string(cluster_m) + "x" + std::to_string(cluster_n) : "") +
         (epilogue_width() < tile_n ? "_e" + std::to_string(epilogue_width()) : "") + (stream_k ? "_sk" : "") +
         (a_rows ? "_ar" + std::to_string(a_rows) : "") + (has_c ? "_withc" : "") + (amax ? "_amax" : "");
}

Sm90aSmem sm90a_smem(const Sm90aSpec& s) {
  Sm90aSmem m{};
  m.a_stage = s.tile_m() * kSm90aTileK * 2;
  m.b_stage = s.tile_n * kSm90aTileK * 2;
  // The epilogue buffer holds what the TMA store reads: a chunk's whole
  // boxes, not the tail stored from registers (at 128 x 224 that frees the
  // 8 KB a fourth stage needs). Stream-K stages a chunk's partial sums through it.
  const int boxed = s.epilogue_width() - (s.stream_k ? 0 : sm90a_tail_cols(s));
  m.epilogue_per_consumer = (s.pingpong ? s.wg_rows : 64) * boxed * (runtime::bits(s.d) / 8);
  tile::SharedLayout layout;
  m.a = layout.ring(m.a_stage, s.stages);
  m.b = layout.ring(m.b_stage, s.stages);
  m.epilogue = layout.buffer(s.consumers * m.epilogue_per_consumer, tile::SharedLayout::kBaseAlignment);
  m.full = layout.mbarriers(s.stages);
  m.empty = layout.mbarriers(s.stages);
  m.bytes = layout.launch_bytes();
  return m;
}

ptx::Module build_sm90a_gemm(const Sm90aSpec& s) {
  if (s.a_rows && (s.a_rows % 8 != 0 || s.a_rows > s.tile_m() || !s.a_k_major || s.cluster_n > 1))
    throw OpsError("sm90a gemm: a_rows " + std::to_string(s.a_rows) + " with tile_m " + std::to_string(s.tile_m()) +
                   (s.a_k_major ? "" : ", M-major A") + (s.cluster_n > 1 ? ", a cluster along N" : "") +
                   "; a multiple of 8 up to tile_m, for K-major A without a cluster along N");
  if (!s.b_k_major && s.tile_n % (s.cluster_m * s.b_box_cols()) != 0)
    throw OpsError("sm90a gemm: N-major B " + std::to_string(s.tile_n) + " columns wide in boxes of " +
                   std::to_string(s.b_box_cols()) + ", cluster " + std::to_string(s.cluster_m) +
                   " along M; the boxes are multicast as many to each CTA of the pair");
  Gemm design(s);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
