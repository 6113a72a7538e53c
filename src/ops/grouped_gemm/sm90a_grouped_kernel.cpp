#include "sm90a_grouped_kernel.hpp"

#include <memory>
#include <optional>

#include "../gemm/sm90a_epilogue.hpp"
#include "grouped_store.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {

constexpr int kTileM = GroupedSm90aConfig::kTileM, kTileK = GroupedSm90aConfig::kTileK;
// A K-major tile's 64 bf16 of K make one 128-byte row, swizzled by 128 bytes
// in 8-row atoms (the wgmma descriptor's SBO; LBO unused, encoded 16). An
// MN-major tile is boxes of 64 elements of M (N) by the 64 K rows, each K
// row 128 bytes (so a K row is a row of the swizzle whichever the major):
// LBO the next box along M (N), SBO the next 8 K rows (PTX ISA 9.7.15.5.1).
constexpr std::uint32_t kRow = kTileK * 2, kAtom = 8 * kRow, kBox = kTileK * kRow;
constexpr int kBoxCols = 64;

// Whether A's tiles are K-major (else M-major) and B's (else N-major): the
// strides the tensors came with, K contiguous or the other index.
bool a_k_major(const GroupedGemmProblem& p) { return p.a.cols_contiguous; }
bool b_k_major(const GroupedGemmProblem& p) { return !p.b.cols_contiguous; }
bool ragged_k(const GroupedGemmProblem& p) { return p.form == GroupedForm::ragged_k; }

// D leaves through shared memory, 64 columns at a time, each warp storing
// whole rows (a 128-byte line a store for 16-bit D), where a row's pairs of
// 16-bit elements are 4-byte aligned (f32 always): the fragments' own
// stores write 16 bytes of 8 rows each and ran at ~1.1 TB/s on an H200
// (2026-11-29). A staged row is padded so that the fragments' writes miss
// no bank: 64 elements + 16 bytes (f32: + 32, 8-byte writes in half-warps).
constexpr int kStagedCols = 64;
bool staged(const GroupedGemmProblem& p) { return p.d_dtype == DType::f32 || p.d.ld % 2 == 0; }
// Ragged K (the weights' gradient, where every element of D[g] inside M x N
// is the tile's to write) with D's rows and groups 16-byte aligned: D's
// tiles leave by TMA store from 128-byte-swizzled boxes, 64 columns a chunk
// (the sm90a GEMM's epilogue, sm90a_epilogue.hpp), so that a tile's stores
// run under the next tile's mainloop (staged stores from registers left
// deepseek's dB, 15 GB of D, in sequence with its FLOPs: docs/PERFORMANCE.md).
bool tma_d(const GroupedGemmProblem& p) {
  const int bytes = runtime::bits(p.d_dtype) / 8;
  return ragged_k(p) && p.d.ld * bytes % 16 == 0 && p.d.batch * bytes % 16 == 0;
}
Sm90aSpec epilogue_spec(const GroupedGemmProblem& p, const GroupedSm90aConfig& c) {
  Sm90aSpec s;
  s.d = p.d_dtype;
  s.tile_n = c.tile_n;
  s.epilogue_cols = kStagedCols;
  return s;
}
std::uint32_t staged_pitch(const GroupedGemmProblem& p) {
  const int bytes = runtime::bits(p.d_dtype) / 8;
  return static_cast<std::uint32_t>(kStagedCols * bytes + (bytes == 4 ? 32 : 16));
}

// The carve-up of the kernel's shared memory. With tma_d, `epilogue` holds the TMA store's boxes (the GEMM epilogue's carve-up) in
// place of the staging rows.
struct Smem {
  std::uint32_t a, b, a_stage, b_stage, full, empty, table, staging, bytes;
  Sm90aSmem epilogue;
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
  if (tma_d(p)) {
    m.epilogue.epilogue_per_consumer = 64 * kStagedCols * runtime::bits(p.d_dtype) / 8;
    m.epilogue.epilogue = layout.buffer(2 * m.epilogue.epilogue_per_consumer, tile::SharedLayout::kBaseAlignment);
  } else if (staged(p)) {
    m.staging = layout.buffer(2 * 64 * staged_pitch(p), 16);  // each consumer warpgroup's 64 rows
  }
  m.bytes = layout.launch_bytes();
  return m;
}

// The group schedule as the template's work source. Ragged M: item (row
// tile of a group, N tile) with tile.m0 its first row, tile.n0 its first
// column, tile.batch the group and extra[0] the group's end row; all K's
// k-blocks. Ragged K: item (group, M tile, N tile) of D[group], with
// extra[0] and extra[1] the group's first and end K index, and the
// k-blocks of 64 from its first: ceil((end - first) / 64), none for an
// empty group (its D is zeros).
class GroupedTiles final : public tile::WorkSource {
 public:
  GroupedTiles(Kernel& k, const GroupScheduleOptions& o, const Reg& offsets, const Reg& extent, const Reg& tid,
               const Reg& table, int tile_n, std::int64_t k_blocks, std::int64_t tiles_n)
      : k_(k), schedule_(k, o, offsets, extent, tid, table), ragged_rows_(o.ragged_rows), tile_n_(tile_n),
        k_blocks_(k_blocks), tiles_n_(tiles_n) {}

  const GroupSchedule& schedule() const { return schedule_; }

  void for_each(const std::function<void(const tile::WorkItem&)>& body, const Reg* offset,
                int stride) const override {
    if (offset || stride != 1)
      throw TileError("the grouped GEMM's work source serves the cooperative schedule only (no offset, stride 1)");
    schedule_.for_each([&](const GroupWork& w) {
      if (ragged_rows_) {
        // Designated: the end row must land in `extra` whatever fields WorkItem gains.
        body(tile::WorkItem{.tile = {w.begin + w.row_tile * imm(kTileM), w.col * imm(tile_n_), w.group, w.unit},
                            .kb0 = k_.mov(u32, 0u),
                            .kb1 = k_.mov(u32, imm(k_blocks_)),
                            .extra = {w.end}});
        return;
      }
      Reg m_tile = k_.div(w.col, imm(tiles_n_));
      Reg n_tile = w.col - m_tile * imm(tiles_n_);
      body(tile::WorkItem{.tile = {m_tile * imm(kTileM), n_tile * imm(tile_n_), w.group, w.unit},
                          .kb0 = k_.mov(u32, 0u),
                          .kb1 = (w.end - w.begin + imm(kTileK - 1)) >> 6u,
                          .extra = {w.begin, w.end}});
    });
  }

 private:
  Kernel& k_;
  GroupSchedule schedule_;
  bool ragged_rows_;
  int tile_n_;
  std::int64_t k_blocks_, tiles_n_;
};

class GroupedDesign final : public tile::WarpSpecializedDesign {
 public:
  GroupedDesign(const GroupedGemmProblem& p, const GroupedSm90aConfig& c)
      : p_(p), c_(c), smem_(smem_of(p, c)), spec_(epilogue_spec(p, c)), k_(kSm90aGroupedKernel, Target::sm_90a) {}

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
    if (tma_d(p_)) map_d_p_ = k_.param_bytes("map_d", 128, 64);
    d_ = k_.param_ptr("D", 4);
    offsets_ = k_.param_ptr("offsets", 4);
    extent_ = k_.param(u32, "extent");
  }

  void prologue(tile::WarpSpecialized& ws) override {
    base_ = ws.smem_base();
    tid_ = ws.tid();
    map_a_ = k_.param_generic_address(map_a_p_);
    map_b_ = k_.param_generic_address(map_b_p_);
    if (ragged_k(p_) || staged(p_)) warpgroup_barriers_.emplace(ws.warpgroup_barriers(128));
    if (tma_d(p_)) out_.map_d = k_.param_generic_address(map_d_p_);
  }

  void initialize(tile::WarpSpecialized&) override {
    k_.prefetch_tensormap(map_a_);
    k_.prefetch_tensormap(map_b_);
    if (tma_d(p_)) k_.prefetch_tensormap(out_.map_d);
  }

  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized&) override {
    auto source = std::make_unique<GroupedTiles>(k_, sm90a_grouped_schedule(p_, c_), offsets_, extent_, tid_,
                                                 base_ + imm(smem_.table), c_.tile_n,
                                                 (p_.k + kTileK - 1) / kTileK, (p_.n + c_.tile_n - 1) / c_.tile_n);
    source_ = source.get();
    return source;
  }

  // A's 128 rows from the tile's first (TMA zero-fills past M; rows past
  // the group's end are never stored) and the group's B tile (ragged K: B
  // is one matrix), K-major as one box, MN-major as boxes of 64 columns;
  // ragged K from the group's first K index.
  void load(const tile::LoadStep& s) override {
    const tile::Tile& t = s.item.tile;
    Reg kx = ragged_k(p_) ? Reg(s.item.extra[0] + (s.kb << 6)) : Reg(s.kb << 6);
    const Reg& stage = s.state.stage();
    Reg a = base_ + imm(smem_.a) + stage * imm(smem_.a_stage);
    Reg b = base_ + imm(smem_.b) + stage * imm(smem_.b_stage);
    if (a_k_major(p_)) {
      k_.tma_load(at(a), map_a_, {kx, t.m0, 0u}, at(s.full));
    } else {
      for (int i = 0; i < kTileM / kBoxCols; ++i)
        k_.tma_load(at(a + imm(i * kBox)), map_a_, {t.m0 + imm(i * kBoxCols), kx, 0u}, at(s.full));
    }
    const Src batch = ragged_k(p_) ? Src(0u) : Src(t.batch);
    if (b_k_major(p_)) {
      k_.tma_load(at(b), map_b_, {kx, t.n0, batch}, at(s.full));
    } else {
      for (int i = 0; i < c_.tile_n / kBoxCols; ++i)
        k_.tma_load(at(b + imm(i * kBox)), map_b_, {t.n0 + imm(i * kBoxCols), kx, batch}, at(s.full));
    }
  }

  // The accumulators (64 rows a warpgroup), stage 0's descriptors, and the
  // rows past the last group zeroed.
  void consumer_setup(tile::WarpSpecialized& ws) override {
    cw_ = ws.warpgroup();
    acc_ = k_.regs(f32, c_.tile_n / 2, "acc");
    // The warpgroup's 64 rows of A: 64 K-major rows, or one MN-major box (the same bytes).
    desc_a0_ = tile::warpgroup::smem_descriptor(k_, base_ + imm(smem_.a) + cw_ * imm(kBox),
                                                a_k_major(p_) ? 16 : kBox, kAtom);
    desc_b0_ = tile::warpgroup::smem_descriptor(k_, base_ + imm(smem_.b), b_k_major(p_) ? 16 : kBox, kAtom);
    if (tma_d(p_)) {
      out_.alpha = k_.mov(f32, imm_f32(1.0f));  // D = acc: times 1, exactly
      leader_ = ws.leader();
      epilogue_.emplace(k_, spec_, smem_.epilogue, out_, base_, tid_, *warpgroup_barriers_);
      epilogue_->begin();
    }
    if (!ragged_k(p_)) {
      // A half tile: both warpgroups on A's first 64 rows, each on its half of B's columns.
      desc_a_top_ = tile::warpgroup::smem_descriptor(k_, base_ + imm(smem_.a), a_k_major(p_) ? 16 : kBox, kAtom);
      Reg half_b = k_.reg(u64);  // this warpgroup's half of B's tile: tile_n / 2 rows of K-major B, or boxes
      k_.cvt(half_b, cw_ * imm(static_cast<std::uint32_t>(c_.tile_n) * kRow / 2 >> 4));
      desc_b_half_ = desc_b0_ + half_b;
      zero_rows_past_end();
    }
  }

  // Ragged M: whether the item is a group's last row tile with 64 rows or
  // fewer in the group (the rest another group's, or past M). Its two
  // warpgroups then split the columns rather than the rows: half the MMA
  // of a whole tile (at 8192 tokens a group's last tile is on average half
  // empty: 12-25% of the rows over 256-512 rows a group).
  Pred half_tile(const tile::WorkItem& w) { return (w.extra[0] - w.tile.m0) <= 64u; }

  // Ragged K: an empty group's item has no k-block, and no walk (the
  // template's frees a slot after the last one); finish stores its zeros.
  void mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& state) override {
    if (!ragged_k(p_)) return ws.walk(w, state);
    k_.if_then(w.kb1 > w.kb0, [&] { ws.walk(w, state); });
  }

  int compute(const tile::ComputeStep& s) override {
    if (ragged_k(p_)) zero_k_rows_past_end(s);
    // A k16 step: 32 bytes along a K-major row, or 16 K rows (two atoms) down an MN-major box.
    const tile::warpgroup::KBlock block{.ab = p_.a_dtype == DType::f16 ? f16 : bf16,
                                        .a_major = a_k_major(p_) ? WgmmaMajor::k : WgmmaMajor::mn,
                                        .b_major = b_k_major(p_) ? WgmmaMajor::k : WgmmaMajor::mn,
                                        .k_steps = kTileK / 16,
                                        .a_step = a_k_major(p_) ? 32 : 2 * kAtom,
                                        .b_step = b_k_major(p_) ? 32 : 2 * kAtom};
    Reg a_offset = k_.reg(u64), b_offset = k_.reg(u64);
    k_.cvt(a_offset, s.state.stage() * imm(smem_.a_stage >> 4));
    k_.cvt(b_offset, s.state.stage() * imm(smem_.b_stage >> 4));
    const Pred& accumulate = s.accumulate();
    auto mma = [&](const Regs& acc, const Reg& desc_a, const Reg& desc_b) {
      tile::warpgroup::mma_k_block(k_, block, acc, a_offset + desc_a, b_offset + desc_b, accumulate);
    };
    if (ragged_k(p_)) {
      mma(acc_, desc_a0_, desc_b0_);
      return 1;
    }
    k_.if_else(
        half_tile(s.item), [&] { mma(half_acc(), desc_a_top_, desc_b_half_); }, [&] { mma(acc_, desc_a0_, desc_b0_); });
    return 1;
  }

  // tma_d: the last tile's TMA stores done before the CTA's shared memory goes.
  void consumer_teardown(tile::WarpSpecialized&) override {
    if (tma_d(p_)) epilogue_->end(leader_, d_);
  }

  // The accumulators of a half tile's part (N = tile_n / 2): the first half.
  Regs half_acc() const { return Regs(acc_.begin(), acc_.begin() + c_.tile_n / 4); }

  // The warpgroup's part of the tile (its 64 rows, or a half tile's 64 rows
  // and its half of the columns): ragged M the rows inside the group
  // (extra[0] its end), ragged K D[group]'s rows inside M; columns inside N.
  void finish(const tile::WorkItem& w) override {
    Reg row_end = ragged_k(p_) ? k_.mov(u32, imm(p_.m)) : w.extra[0];
    Reg d_tile = ragged_k(p_) ? Reg(d_ + at_group(w)) : d_;
    const Part whole{w.tile.m0 + cw_ * 64u, w.tile.n0, c_.tile_n, acc_};
    if (ragged_k(p_)) {
      // An empty group's zeros are stored as such (store_zeros), or
      // selected, not moved into the accumulators, which would keep ptxas
      // from pipelining wgmma (C7515).
      Pred empty = w.kb1 == w.kb0;
      if (tma_d(p_))
        return k_.if_else(empty, [&] { store_zeros(whole, d_tile, row_end); },
                          [&] { epilogue_->store({acc_}, w.tile, cw_ << 6u, cw_, leader_); });
      if (!staged(p_)) return store_fragments(whole, d_tile, row_end, &empty);
      return k_.if_else(empty, [&] { store_zeros(whole, d_tile, row_end); },
                        [&] { store_staged(whole, d_tile, row_end); });
    }
    const Part half{w.tile.m0, w.tile.n0 + cw_ * imm(c_.tile_n / 2), c_.tile_n / 2, half_acc()};
    k_.if_else(half_tile(w), [&] { store_part(half, d_tile, row_end); }, [&] { store_part(whole, d_tile, row_end); });
  }

 private:
  // A consumer warpgroup's part of a tile: 64 rows of D from row0, `cols`
  // columns from col0, in `acc` (a wgmma of N = cols).
  struct Part {
    Reg row0, col0;
    int cols;
    Regs acc;
  };

  void store_part(const Part& part, const Reg& d_tile, const Reg& row_end) {
    if (staged(p_)) return store_staged(part, d_tile, row_end);
    store_fragments(part, d_tile, row_end, nullptr);
  }

  // The part from its registers (16-bit D whose rows' pairs are not 4-byte
  // aligned): register i of a thread holds row 16·warp + lane/4 + 8·((i/2)
  // % 2) and column 8·(i/4) + 2·(lane%4) + i%2 (PTX ISA 9.7.15.5.1.1.1);
  // zeros where `zero` holds.
  void store_fragments(const Part& part, const Reg& d_tile, const Reg& row_end, const Pred* zero) {
    auto value = [&](std::size_t i) { return zero ? k_.selp(imm_f32(0.0f), part.acc[i], *zero) : part.acc[i]; };
    const int bytes = runtime::bits(p_.d_dtype) / 8;
    Reg lane = tid_ & 31u;
    Reg row0 = part.row0 + (((tid_ >> 5) & 3u) << 4) + (lane >> 2);
    Reg col0 = part.col0 + ((lane & 3u) << 1);
    Reg at_row = k_.reg(u64), at_col = k_.reg(u64);
    k_.mul_wide(at_row, row0, imm(p_.d.ld * bytes));
    k_.mul_wide(at_col, col0, imm(bytes));
    Reg lane_d = d_tile + at_row + at_col;
    for (int h = 0; h < 2; ++h) {
      Pred row_in = (row0 + imm(8 * h)) < row_end;
      for (int j = 0; j < part.cols / 8; ++j) {
        const std::size_t i = static_cast<std::size_t>(4 * j + 2 * h);
        Reg address = lane_d + Src(static_cast<std::uint64_t>((8 * h * p_.d.ld + 8 * j) * bytes));
        store_d_pair(k_, p_.d_dtype, address, value(i), value(i + 1), row_in && ((col0 + imm(8 * j)) < imm(p_.n)),
                     row_in && ((col0 + imm(8 * j + 1)) < imm(p_.n)), false);
      }
    }
  }

  // Ragged K: D[group]'s offset in bytes.
  Reg at_group(const tile::WorkItem& w) {
    Reg at_group = k_.reg(u64);
    k_.mul_wide(at_group, w.tile.batch, imm(p_.d.batch * runtime::bits(p_.d_dtype) / 8));
    return at_group;
  }

  // D through the warpgroup's staging rows (see `staged`), 64 columns a
  // pass: the fragments written as D's dtype (register i: row 16·warp +
  // lane/4 + 8·((i/2) % 2), column 8·(i/4) + 2·(lane%4) + i%2), the
  // warpgroup's barrier, the rows stored (store_rows), the barrier again
  // before the next pass writes.
  void store_staged(const Part& part, const Reg& d_tile, const Reg& row_end) {
    const int bytes = runtime::bits(p_.d_dtype) / 8;
    const std::uint32_t pitch = staged_pitch(p_);
    Reg lane = tid_ & 31u, warp = (tid_ >> 5) & 3u;
    Reg stage = base_ + imm(smem_.staging) + cw_ * imm(64 * pitch);
    Reg fragment = stage + ((warp << 4) + (lane >> 2)) * imm(pitch) + ((lane & 3u) << 1) * imm(bytes);
    const tile::NamedBarrier barrier = warpgroup_barriers_->of(cw_);
    for (int pass = 0; pass < part.cols / kStagedCols; ++pass) {
      for (int h = 0; h < 2; ++h)
        for (int jj = 0; jj < kStagedCols / 8; ++jj) {
          const std::size_t i = static_cast<std::size_t>(4 * (8 * pass + jj) + 2 * h);
          const Addr at_fragment = at(fragment, static_cast<std::int64_t>(8 * h * pitch + 8 * jj * bytes));
          if (p_.d_dtype == DType::f32) {
            k_.st(Space::shared, f32, at_fragment, Regs{part.acc[i], part.acc[i + 1]});
          } else {
            Reg packed = k_.reg(b32);
            k_.cvt_pack(p_.d_dtype == DType::f16 ? f16x2 : bf16x2, packed, part.acc[i + 1], part.acc[i]);  // i low
            k_.st(Space::shared, b32, at_fragment, packed);
          }
        }
      barrier.sync();
      store_rows(part, d_tile, row_end, pass, [&](const Reg& row, const Reg& word) {
        Reg v = k_.reg(b32);
        k_.ld(Space::shared, b32, v, at(stage + row * imm(pitch) + (word << 2u)));
        return v;
      });
      barrier.sync();
    }
  }

  // Ragged K: an empty group's tile of zeros, stored as store_staged's rows.
  void store_zeros(const Part& part, const Reg& d_tile, const Reg& row_end) {
    Reg zero = k_.mov(b32, 0u);
    for (int pass = 0; pass < part.cols / kStagedCols; ++pass)
      store_rows(part, d_tile, row_end, pass, [&](const Reg&, const Reg&) { return zero; });
  }

  // The warpgroup's 64 rows of one pass's 64 columns to D: warp w stores
  // rows w, w + 4, .. whole, 4 bytes a lane (a pair of 16-bit elements, or
  // one f32: word_of(row, word) gives it), where the row is below row_end
  // and the element inside N (a 16-bit pair's first alone at N's end).
  void store_rows(const Part& part, const Reg& d_tile, const Reg& row_end, int pass,
                  const std::function<Reg(const Reg&, const Reg&)>& word_of) {
    const int bytes = runtime::bits(p_.d_dtype) / 8;
    const bool f32_d = p_.d_dtype == DType::f32;
    Reg lane = tid_ & 31u, warp = (tid_ >> 5) & 3u;
    const Reg& rows0 = part.row0;
    for (int q = 0; q < kStagedCols * bytes / 4 / 32; ++q) {
      Reg word = lane + imm(32 * q);
      Reg col = part.col0 + imm(pass * kStagedCols) + (f32_d ? word : Reg(word << 1u));
      Reg at_col = k_.reg(u64);
      k_.mul_wide(at_col, col, imm(bytes));
      Pred col_in = col < imm(p_.n);
      Pred pair_in = (col + (f32_d ? 0u : 1u)) < imm(p_.n);
      for (int r = 0; r < 16; ++r) {
        Reg row = warp + imm(4 * r);  // of the warpgroup's 64
        Reg v = word_of(row, word);
        Reg at_row = k_.reg(u64);
        k_.mul_wide(at_row, rows0 + row, imm(p_.d.ld * bytes));
        Reg address = d_tile + at_row + at_col;
        Pred row_in = (rows0 + row) < row_end;
        if (f32_d) {
          k_.guarded(row_in && col_in, [&] { k_.st(Space::global, b32, at(address), v); });
        } else {
          Reg low = k_.reg(b16);
          k_.cvt(u16, u32, low, v);
          k_.if_else(row_in && pair_in, [&] { k_.st(Space::global, b32, at(address), v); },
                     [&] { k_.guarded(row_in && col_in, [&] { k_.st(Space::global, b16, at(address), low); }); });
        }
      }
    }
  }

  // Ragged K: the k-block's K rows past the group's end (the next group's,
  // brought by the box) zeroed in this warpgroup's A box and in B before
  // wgmma reads them (both: a product with any value is then zero, also an
  // Inf's). In an MN-major box a K row is 128 contiguous bytes whatever the
  // swizzle (it permutes 16-byte pieces inside a row). The two warpgroups
  // write the same zeros into B. Then fence.proxy.async (wgmma reads through
  // the async proxy, PTX ISA 9.7.13.4) and the warpgroup's barrier.
  void zero_k_rows_past_end(const tile::ComputeStep& s) {
    Reg left = s.item.extra[1] - s.item.extra[0] - (s.kb << 6);  // the group's K rows from this block's first
    k_.if_then(left < imm(kTileK), [&] {
      const Reg& stage = s.state.stage();
      std::vector<Reg> boxes{base_ + imm(smem_.a) + stage * imm(smem_.a_stage) + cw_ * imm(kBox)};
      for (int i = 0; i < c_.tile_n / kBoxCols; ++i)
        boxes.push_back(base_ + imm(smem_.b) + stage * imm(smem_.b_stage) + imm(i * kBox));
      Reg first = left << 7u;                    // the first row to zero, in bytes
      Reg pieces = k_.mov(u32, imm(kTileK * 8)) - (left << 3u);  // 16-byte pieces from it to the box's end
      Regs zero;
      for (int i = 0; i < 4; ++i) zero.push_back(k_.mov(b32, 0u));
      for (const Reg& box : boxes)
        k_.for_range(tid_ & 127u, pieces, 128u,
                     [&](Reg piece) { k_.st(Space::shared, b32, at(box + first + (piece << 4u)), zero); });
      k_.fence_proxy_async_shared();
      warpgroup_barriers_->of(cw_).sync();
    });
  }

  // Rows [end of the last group, M) of D: zeros, element by element, the
  // consumer threads of every CTA taking every (CTAs x 256)-th.
  void zero_rows_past_end() {
    const int bytes = runtime::bits(p_.d_dtype) / 8;
    Reg first_row = source_->schedule().rows_end();
    Reg count = (extent_ - first_row) * imm(p_.n);
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
  Sm90aSpec spec_;  // tma_d: what the GEMM's epilogue is told of D and the tile
  Kernel k_;
  const GroupedTiles* source_ = nullptr;
  ParamRef map_a_p_, map_b_p_, map_d_p_;
  Reg map_a_, map_b_, d_, offsets_, extent_, base_, tid_, cw_, desc_a0_, desc_b0_;
  Reg desc_a_top_, desc_b_half_;  // ragged M: a half tile's (half_tile)
  Regs acc_;
  // Each consumer warpgroup's (ragged K's zeroed rows, the staged D).
  std::optional<tile::NamedBarrierSet> warpgroup_barriers_;
  // tma_d: D's map and the epilogue that stores through it; the warpgroup's first thread.
  Sm90aOutput out_;
  std::optional<Sm90aEpilogue> epilogue_;
  Pred leader_;
};

}  // namespace

std::string GroupedSm90aConfig::describe() const {
  return std::to_string(kTileM) + "x" + std::to_string(tile_n) + "x" + std::to_string(kTileK) + " s" +
         std::to_string(stages);
}

GroupScheduleOptions sm90a_grouped_schedule(const GroupedGemmProblem& p, const GroupedSm90aConfig& c) {
  GroupScheduleOptions o;
  o.groups = p.groups;
  if (ragged_k(p)) {  // every group's D tiles, empty groups too (zeros), row-major
    o.ragged_rows = false;
    o.units_per_row = (p.m + kTileM - 1) / kTileM * ((p.n + c.tile_n - 1) / c.tile_n);
    return o;
  }
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

bool sm90a_grouped_tma_d(const GroupedGemmProblem& p) { return tma_d(p); }

std::uint32_t sm90a_grouped_shared_bytes(const GroupedGemmProblem& p, const GroupedSm90aConfig& c) {
  return smem_of(p, c).bytes;
}

std::vector<std::string> sm90a_grouped_refusals(const GroupedGemmProblem& p) {
  std::vector<std::string> why;
  if (p.packed_b && !a_k_major(p))
    why.push_back("packed weights with A's K not contiguous (A strides as given): the sm90a grouped kernel's RS "
                  "design loads K-major token tiles (make A's K contiguous)");
  if (p.scaled_a || p.amax)
    why.push_back("block-scaled A or amax: the sm90a grouped kernel multiplies bf16 or f16 tokens (against bf16, "
                  "f16 or packed block-scaled weights)");
  if (p.packed_b && p.native_b)
    why.push_back("block-scaled B in GemmAmax's layout: the sm90a grouped kernel reads packed weights (prepack_weights)");
  if (!ragged_k(p) && !a_k_major(p) && p.m > 1)
    why.push_back("A is m-major: in ragged M the sm90a grouped kernel loads K-major A tiles (make A's K contiguous)");
  if (ragged_k(p) && p.k > 1 && (a_k_major(p) || b_k_major(p)))
    why.push_back(std::string("ragged K with K contiguous in ") + (a_k_major(p) ? "A" : "B") +
                  ": the sm90a grouped kernel zeroes a k-block's K rows past the group's end in MN-major tiles "
                  "(A M-major, B N-major: the weights' gradient Xᵀ·dY)");
  if (ragged_k(p) && p.d.batch * (runtime::bits(p.d_dtype) / 8) >= (std::int64_t{1} << 32))
    why.push_back("D's group stride " + std::to_string(p.d.batch) +
                  " elements: the sm90a grouped kernel takes it in 32-bit bytes");
  if (p.m > (std::int64_t{1} << 31) - 1 || p.n > (std::int64_t{1} << 31) - 1 || p.k > (std::int64_t{1} << 31) - 1)
    why.push_back("M, N or K above 2^31 - 1: TMA coordinates are signed 32-bit (PTX ISA 9.7.9.25.5.1)");
  return why;
}

ptx::Module build_sm90a_grouped(const GroupedGemmProblem& p, const GroupedSm90aConfig& c) {
  if ((c.tile_n != 64 && c.tile_n != 128 && c.tile_n != 256) || c.stages < 2 || c.stages > 8 || sm90a_grouped_shared_bytes(p, c) > 227 * 1024)
    throw OpsError("sm90a grouped kernel: configuration " + c.describe() + " needs " +
                   std::to_string(sm90a_grouped_shared_bytes(p, c)) +
                   " bytes of shared memory; it takes tile_n 64, 128 or 256 and 2-8 "
                   "stages within 227 KB");
  GroupedDesign design(p, c);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
