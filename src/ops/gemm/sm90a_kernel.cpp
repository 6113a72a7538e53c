#include "sm90a_kernel.hpp"

#include <functional>
#include <optional>
#include <utility>

#include "c_element.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/smem_swizzle.hpp"
#include "warpforge/tile/tile_scheduler.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {

using namespace dsl;

namespace {

constexpr std::uint32_t kRow = 128;         // bytes per swizzled row (128-byte swizzle)
constexpr std::uint32_t kAtom = 8 * kRow;   // 8 rows: the swizzle pattern's repeat
// An MN-major box of `cols` 16-bit elements by 64 K rows, and its 8-K-row
// atom (the wgmma descriptor's LBO and SBO for such a tile).
std::uint32_t mn_box_bytes(int cols) { return static_cast<std::uint32_t>(cols) * 2 * 64; }
std::uint32_t mn_atom_bytes(int cols) { return static_cast<std::uint32_t>(cols) * 2 * 8; }
// The 128-byte mode on byte offsets, Swizzle<3,4,3>: TMA's and wgmma's.
const layout::Swizzle kSwizzle128 = layout::smem_swizzle(layout::SmemSwizzle::b128, 1);
// Work units (a cluster's tiles) per group along M of the grouped order:
// the CTAs running at once share A rows and B columns in L2.
constexpr int kGroupRows = 16;

Type dsl_type(runtime::DType t) {
  switch (t) {
    case runtime::DType::bf16: return Type::bf16;
    case runtime::DType::f16: return Type::f16;
    case runtime::DType::f32: return Type::f32;
    default: throw OpsError("sm90a gemm: no kernel type for " + std::string(runtime::name(t)));
  }
}

// The GEMM as a design of the warp-specialized template
// (tile/warp_specialized.hpp): the template runs the roles, the pipeline,
// the persistent loop over the tile scheduler (cooperative, ping-pong,
// stream-K) and the clusters; the design loads A's and B's tiles of a
// k-block with TMA, multiplies a stage with wgmma and stores a finished
// tile through shared memory with TMA.
class Gemm final : public tile::WarpSpecializedDesign {
 public:
  explicit Gemm(const Sm90aSpec& s);

  Kernel& kernel() override { return k_; }
  tile::WarpSpecializedConfig config() const override;
  void params(tile::WarpSpecialized& ws) override;
  void prologue(tile::WarpSpecialized& ws) override;
  void initialize(tile::WarpSpecialized& ws) override;
  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized& ws) override;
  void load(const tile::LoadStep& s) override;
  void consumer_setup(tile::WarpSpecialized& ws) override;
  int compute(const tile::ComputeStep& s) override;
  void finish(const tile::WorkItem& w) override { epilogue(accs_, w.tile, rows0_, cw_, leader_); }
  void consumer_teardown(tile::WarpSpecialized& ws) override;
  const Regs& partial_sums() const override { return accs_[0]; }
  void acquire_staging(tile::WarpSpecialized& ws) override;

 private:
  void load_share(const Reg& map, const Reg& dst, const Reg& row0, int rows, bool k_major, int box_cols,
                  const Reg& part, int parts, const Reg& kx, const Reg& batch, const Reg& full,
                  const std::optional<Src>& mask);
  void epilogue(const std::vector<Regs>& accs, const tile::Tile& t, const Reg& rows0, const Reg& cw,
                const Pred& leader);
  std::pair<Reg, Reg> output_pair(const Regs& acc, int i, const tile::Tile& t, const Reg& row, const Reg& lane);
  void add_c(const Reg& v, const Reg& row_offset, const Reg& col, const Pred& inside);
  void store_tail(const Regs& acc, int col0, int col1, const tile::Tile& t, const Reg& rows0, const Reg& row0,
                  const Reg& lane);

  Sm90aSpec s_;
  Sm90aSmem smem_;
  Kernel k_;
  int tile_m_;
  tile::WarpSpecialized* ws_ = nullptr;
  const tile::TileScheduler* sched_ = nullptr;
  ParamRef map_a_p_, map_b_p_, map_d_p_;
  Reg map_a_, map_b_, map_d_;
  Reg c_, c_rs_, c_cs_, c_bs_, d_, d_rs_, d_bs_, m_, n_, kdim_, l_, alpha_, beta_;
  Reg base_, tid_;
  std::optional<tile::NamedBarrierSet> epilogue_barriers_;  // each consumer warpgroup's epilogue
  Reg amax_, thread_max_;  // with amax: its address, this thread's max |D| bits
  // The consumers': warpgroup, first thread, accumulators, first row in
  // the tile, wgmma descriptors of stage 0.
  Reg cw_;
  Pred leader_;
  std::vector<Regs> accs_;
  Reg rows0_;
  std::vector<Reg> desc_a0_;
  Reg desc_b0_;
};

Gemm::Gemm(const Sm90aSpec& s) : s_(s), smem_(sm90a_smem(s)), k_(s.name(), Target::sm_90a), tile_m_(s.tile_m()) {
  if (s_.a_rows && (s_.a_rows % 8 != 0 || s_.a_rows > tile_m_ || !s_.a_k_major || s_.cluster_n > 1))
    throw OpsError("sm90a gemm: a_rows " + std::to_string(s_.a_rows) + " with tile_m " + std::to_string(tile_m_) +
                   (s_.a_k_major ? "" : ", M-major A") + (s_.cluster_n > 1 ? ", a cluster along N" : "") +
                   "; a multiple of 8 up to tile_m, for K-major A without a cluster along N");
  if (!s_.b_k_major && s_.tile_n % (s_.cluster_m * s_.b_box_cols()) != 0)
    throw OpsError("sm90a gemm: N-major B " + std::to_string(s_.tile_n) + " columns wide in boxes of " +
                   std::to_string(s_.b_box_cols()) + ", cluster " + std::to_string(s_.cluster_m) +
                   " along M; the boxes are multicast as many to each CTA of the pair");
}

tile::WarpSpecializedConfig Gemm::config() const {
  tile::WarpSpecializedConfig c;
  c.consumers = s_.consumers;
  c.schedule = s_.pingpong ? tile::ConsumerSchedule::pingpong : tile::ConsumerSchedule::cooperative;
  c.stages = s_.stages;
  c.full_barriers = smem_.full;
  c.empty_barriers = smem_.empty;
  // Only a_load_rows of A's tile arrive (the rest of its stage is not loaded).
  c.stage_bytes = s_.a_load_rows() * kRow + smem_.b_stage;
  c.cluster_m = s_.cluster_m;
  c.cluster_n = s_.cluster_n;
  // Stream-K stages the partial sums it adds through the epilogue's buffer.
  if (s_.stream_k)
    c.stream_k = {static_cast<std::uint32_t>(tile_m_ * s_.tile_n * 4), smem_.epilogue, smem_.epilogue_per_consumer};
  return c;
}

void Gemm::params(tile::WarpSpecialized& ws) {
  ws_ = &ws;
  map_a_p_ = k_.param_bytes("map_a", 128, 64);
  map_b_p_ = k_.param_bytes("map_b", 128, 64);
  map_d_p_ = k_.param_bytes("map_d", 128, 64);
  if (s_.has_c) {
    c_ = k_.param_ptr("C", runtime::bits(s_.d) / 8);
    c_rs_ = k_.param(u64, "c_row_stride");
    c_cs_ = k_.param(u64, "c_col_stride");
    c_bs_ = k_.param(u64, "c_batch_stride");
  }
  if (sm90a_tail_cols(s_)) {
    d_ = k_.param_ptr("D", runtime::bits(s_.d) / 8);
    d_rs_ = k_.param(u64, "d_row_stride");
    d_bs_ = k_.param(u64, "d_batch_stride");
  }
  m_ = k_.param(u32, "M");
  n_ = k_.param(u32, "N");
  kdim_ = k_.param(u32, "K");
  l_ = k_.param(u32, "L");
  alpha_ = k_.param(f32, "alpha");
  if (s_.has_c) beta_ = k_.param(f32, "beta");
  if (s_.amax) amax_ = k_.param(u64, "amax");
}

void Gemm::prologue(tile::WarpSpecialized& ws) {
  base_ = ws.smem_base();
  tid_ = ws.tid();
  epilogue_barriers_ = ws.warpgroup_barriers(128);
  map_a_ = k_.param_generic_address(map_a_p_);
  map_b_ = k_.param_generic_address(map_b_p_);
  map_d_ = k_.param_generic_address(map_d_p_);
}

void Gemm::initialize(tile::WarpSpecialized&) {
  k_.prefetch_tensormap(map_a_);
  k_.prefetch_tensormap(map_b_);
  k_.prefetch_tensormap(map_d_);
}

// Work units are a cluster's tiles, CTA rank r of a cluster taking tile
// (r % cluster_m, r / cluster_m) of its unit, in groups of kGroupRows units
// along M; with stream_k, the last units split by k-blocks between CTAs,
// whose partial sums the template adds (tile/stream_k_reduction.hpp).
std::unique_ptr<tile::WorkSource> Gemm::work_source(tile::WarpSpecialized&) {
  auto sched = std::make_unique<tile::TileScheduler>(k_,
                                                     tile::TileSchedulerOptions{.tile_m = tile_m_,
                                                                                .tile_n = s_.tile_n,
                                                                                .tile_k = kSm90aTileK,
                                                                                .cluster_m = s_.cluster_m,
                                                                                .cluster_n = s_.cluster_n,
                                                                                .group_rows = kGroupRows,
                                                                                .stream_k = s_.stream_k},
                                                     m_, n_, kdim_, l_);
  sched_ = sched.get();
  return sched;
}

// A's and B's tiles of one k-block, each CTA of a cluster loading its share
// of the tiles it shares and multicasting it to the others.
void Gemm::load(const tile::LoadStep& s) {
  const tile::Tile& t = s.item.tile;
  const Reg& stage = s.state.stage();
  Reg kx = s.kb << 6;
  load_share(map_a_, base_ + smem_.a + stage * smem_.a_stage, t.m0, s_.a_load_rows(), s_.a_k_major, 64,
             sched_->rank_n(), s_.cluster_n, kx, t.batch, s.full, ws_->row_multicast());
  load_share(map_b_, base_ + smem_.b + stage * smem_.b_stage, t.n0, s_.tile_n, s_.b_k_major, s_.b_box_cols(),
             sched_->rank_m(), s_.cluster_m, kx, t.batch, s.full, ws_->column_multicast());
}

// Share `part` of `parts` of one operand tile, `rows` of M or N by 64 of K,
// multicast to the CTAs of `mask` when given: K-major as a box of
// rows / parts x 64, MN-major as boxes of box_cols along M/N by 64 K rows,
// rows / box_cols / parts of them.
void Gemm::load_share(const Reg& map, const Reg& dst, const Reg& row0, int rows, bool k_major, int box_cols,
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

void Gemm::consumer_setup(tile::WarpSpecialized& ws) {
  if (s_.amax) thread_max_ = k_.mov(u32, 0u);
  cw_ = ws.warpgroup();
  leader_ = ws.leader();
  // Cooperative: the warpgroups share each tile, 64 rows each (rows 64·cw..).
  // Ping-pong: each takes whole tiles (every other one of the CTA's), 64
  // or 128 rows as one or two m64 accumulators, so that one's epilogue runs
  // under the other's mainloop.
  const int halves = s_.pingpong ? s_.wg_rows / 64 : 1;
  for (int h = 0; h < halves; ++h) accs_.push_back(k_.regs(f32, s_.tile_n / 2, h == 0 ? "acc" : "acc_hi"));
  // K-major tiles are 8-row atoms of 128-byte rows (SBO = one atom, LBO
  // unused: encoded as 16); MN-major tiles are boxes of 64 K rows, 64
  // elements wide (32 for B in the 64-byte swizzle: Sm90aSpec::b_box_cols),
  // LBO = the next box along M/N, SBO = the next 8 K rows.
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

// One k-block: each accumulator's k16 steps on the stage's A and B tiles (a
// commit group each). Each k16 step moves 32 bytes along a K-major row, or
// 16 K rows (two 8-row atoms) down an MN-major box.
int Gemm::compute(const tile::ComputeStep& s) {
  const tile::warpgroup::KBlock block{.ab = dsl_type(s_.ab),
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

void Gemm::consumer_teardown(tile::WarpSpecialized&) {
  if (s_.amax) {  // |D| bits: unsigned order is value order, a positive NaN above +inf
    Reg warp_max = k_.reg(u32);
    k_.redux_sync(Redux::max, warp_max, thread_max_);
    k_.if_then((tid_ & 31u) == 0u, [&] { k_.red(Space::global, AtomOp::max, u32, at(amax_), warp_max); });
  }
  k_.if_then(leader_, [&] { k_.bulk_wait_group(0); });
}

// Stream-K stages the sums it adds through the epilogue's buffer, once the
// last tile's store has read it.
void Gemm::acquire_staging(tile::WarpSpecialized&) {
  k_.if_then(leader_, [&] { k_.bulk_wait_group_read(0); });
  epilogue_barriers_->of(cw_).sync();
}

// alpha·acc[i], alpha·acc[i + 1] (+ beta·C) for accumulator pair i of this
// thread: row `row` of the tile, columns 8·(i/4) + 2·(lane%4) + {0, 1}; with
// amax, the magnitudes of those inside D folded into the thread's maximum
// (past M or N a sum may be inf x 0 = NaN from A's or B's zero fill).
std::pair<Reg, Reg> Gemm::output_pair(const Regs& acc, int i, const tile::Tile& t, const Reg& row,
                                            const Reg& lane) {
  Reg v0 = k_.reg(f32), v1 = k_.reg(f32);
  k_.mul(v0, acc[i], alpha_);
  k_.mul(v1, acc[i + 1], alpha_);
  if (!s_.has_c && !s_.amax) return {v0, v1};
  Reg grow = t.m0 + row, gcol = t.n0 + (i / 4) * 8 + ((lane & 3) << 1);
  Reg offset;
  if (s_.has_c) {
    offset = k_.reg(u64);
    Reg tmp = k_.reg(u64);
    k_.mul_wide(offset, t.batch, 1);
    k_.mul(offset, offset, c_bs_);
    k_.mul_wide(tmp, grow, 1);
    k_.mad(offset, tmp, c_rs_, offset);
  }
  for (int e = 0; e < 2; ++e) {
    Reg col = gcol + e;
    const Reg& v = e == 0 ? v0 : v1;
    Pred inside = (grow < m_) && (col < n_);
    if (s_.has_c) add_c(v, offset, col, inside);
    if (s_.amax) {
      Reg bits = k_.reg(b32), kept = k_.reg(u32);
      k_.mov(bits, v);
      k_.selp(kept, bits.as(u32) & 0x7fffffffu, 0u, inside);
      k_.max(thread_max_, thread_max_, kept);
    }
  }
  return {v0, v1};
}

// v += beta·C at column `col` of the row whose offset in C (elements) is
// `row_offset`, where the element is inside C.
void Gemm::add_c(const Reg& v, const Reg& row_offset, const Reg& col, const Pred& inside) {
  const int es = runtime::bits(s_.d) / 8;
  Reg at_col = k_.reg(u64);
  k_.mul_wide(at_col, col, 1);
  k_.mad(at_col, at_col, c_cs_, row_offset);
  Reg address = c_ + at_col * es;
  k_.if_then(inside, [&] { k_.fma(v, load_c_element(k_, s_.d, address), beta_, v); });
}

// The output tile converted to D's type and written into 128-byte-swizzled
// boxes of 64 rows (the layout the TMA store reads with the same swizzle:
// 16-byte chunk c of row r lands at chunk c ^ (r % 8)), then stored by TMA.
// 16-bit D goes through stmatrix, four 8x8 matrices (16 rows x 16 columns)
// per instruction: the accumulator's fragment is stmatrix's (PTX ISA
// 9.7.14.5.16), and lane l gives the row address of matrix l / 8.
void Gemm::epilogue(const std::vector<Regs>& accs, const tile::Tile& t, const Reg& rows0, const Reg& cw,
                          const Pred& leader) {
  const int es = runtime::bits(s_.d) / 8;
  const int box_cols = sm90a_store_box_cols(s_);
  const int width = s_.epilogue_width();
  const int boxed = width / box_cols * box_cols;  // columns of a chunk through whole store boxes
  const std::uint32_t half_bytes = 64 * boxed * es;  // one 64-row accumulator's boxes of a chunk
  Reg epi = base_ + smem_.epilogue + cw * smem_.epilogue_per_consumer;
  const tile::NamedBarrier chunk_barrier = epilogue_barriers_->of(cw);
  Reg lane = tid_ & 31, g = lane >> 2;
  Reg warp_row = ((tid_ >> 5) & 3) * 16;  // this warp's first row in the accumulator's 64
  Reg row0 = warp_row + g;                // this thread's first accumulator row
  const Type dt = dsl_type(s_.d);
  // Chunks of `width` columns through one buffer: each waits until the store
  // before it has read the buffer.
  for (int col0 = 0; col0 < s_.tile_n; col0 += width) {
    k_.if_then(leader, [&] { k_.bulk_wait_group_read(0); });
    chunk_barrier.sync();
    for (std::size_t h = 0; h < accs.size(); ++h) {
      const Regs& acc = accs[h];
      Reg half = epi + static_cast<std::uint32_t>(h) * half_bytes;
      Reg tile_row0 = rows0 + 64 * static_cast<int>(h);  // the accumulator's first row in the tile
      if (es == 4) {
        Reg col_byte = (lane & 3) * 8;  // the thread's first column's byte in each 8-column group
        for (int i = col0 / 2; i < (col0 + width) / 2; i += 2) {
          const int byte0 = ((i / 4) * 8 - col0) * es;  // the 8-column group's first byte in the chunk row
          Reg row = row0 + 8 * ((i / 2) % 2);
          auto [v0, v1] = output_pair(acc, i, t, tile_row0 + row, lane);
          Reg byte = col_byte + (byte0 % kRow);
          Reg chunk = (byte >> 4) ^ g;  // row % 8 == g: rows are 16·warp + g + 8·half
          Reg address = half + (byte0 / kRow) * (64 * kRow) + row * kRow + (chunk << 4) + (byte & 15);
          k_.st(Space::shared, f32, at(address), Regs{v0, v1});
        }
      } else {
        // Matrix q of each stmatrix is rows 8·(q % 2).. of column group q / 2.
        Reg row_in_matrix = lane & 7;
        Reg row_address = half + (warp_row + ((lane >> 3) & 1) * 8 + row_in_matrix) * kRow;
        Reg group_of_lane = lane >> 4;
        for (int j = col0 / 16; j < (col0 + boxed) / 16; ++j) {
          Regs packed;
          for (int q = 0; q < 4; ++q) {
            const int i = 2 * (4 * j + q);
            auto [v0, v1] = output_pair(acc, i, t, tile_row0 + row0 + 8 * (q % 2), lane);
            packed.push_back(k_.reg(b32));
            k_.cvt_pack(dt == Type::bf16 ? bf16x2 : f16x2, packed.back(), v1, v0);
          }
          // 8-column groups of 16 bytes, 8 per 128-byte box row; a box (64
          // rows of 128 bytes) is 2^13 bytes. The row's phase is its row in the matrix.
          Reg group = group_of_lane + (2 * j - col0 / 8);
          Reg address =
              row_address + ((group >> 3) << 13) + tile::swizzled_chunk(k_, kSwizzle128, group, row_in_matrix);
          k_.stmatrix(at(address), packed);
        }
        if (boxed < width) store_tail(acc, col0 + boxed, col0 + width, t, tile_row0, row0, lane);
      }
    }
    k_.fence_proxy_async_shared();  // the TMA store reads what ordinary stores wrote
    chunk_barrier.sync();
    k_.if_then(leader, [&] {
      for (std::size_t h = 0; h < accs.size(); ++h)
        for (int bx = 0; bx < width / box_cols; ++bx)
          k_.tma_store(map_d_,
                       {t.n0 + (col0 + bx * box_cols), t.m0 + rows0 + 64 * static_cast<int>(h), t.batch},
                       at(epi, static_cast<std::uint32_t>(h) * half_bytes + bx * 64 * kRow));
      k_.bulk_commit_group();
    });
  }
}

// The tile's columns [col0, col1) past its last whole store box (a 16-bit D
// and tile_n an odd multiple of 32): each thread stores its pairs of columns straight
// from registers, a 32-bit store where both lie inside D, else the one that
// does. A box of 64 columns there would overwrite the next tile's (TMA clips
// only at the tensor's edge), and they are a fifth of a tile at most.
void Gemm::store_tail(const Regs& acc, int col0, int col1, const tile::Tile& t, const Reg& rows0,
                            const Reg& row0, const Reg& lane) {
  const int es = runtime::bits(s_.d) / 8;
  const Type packed_type = dsl_type(s_.d) == Type::bf16 ? bf16x2 : f16x2;
  Reg batch_offset = k_.reg(u64);
  k_.mul_wide(batch_offset, t.batch, 1);
  k_.mul(batch_offset, batch_offset, d_bs_);
  for (int i = col0 / 2; i < col1 / 2; i += 2) {
    Reg row = rows0 + row0 + 8 * ((i / 2) % 2);
    auto [v0, v1] = output_pair(acc, i, t, row, lane);
    Reg packed = k_.reg(b32);
    k_.cvt_pack(packed_type, packed, v1, v0);
    Reg grow = t.m0 + row, gcol = t.n0 + (i / 4) * 8 + ((lane & 3) << 1);
    Reg offset = k_.reg(u64), col = k_.reg(u64);
    k_.mul_wide(offset, grow, 1);
    k_.mad(offset, offset, d_rs_, batch_offset);
    k_.mul_wide(col, gcol, 1);
    Reg address = d_ + (offset + col) * es;
    Pred row_inside = grow < m_;
    k_.if_else(
        row_inside && (gcol + 1 < n_), [&] { k_.st(Space::global, b32, at(address), packed); },
        [&] {
          k_.if_then(row_inside && (gcol < n_), [&] {
            Reg low = k_.reg(u16);
            k_.cvt(u16, u32, low, packed);  // the low half: column gcol's value
            k_.st(Space::global, u16, at(address), low);
          });
        });
  }
}

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

ptx::Module build_sm90a_gemm(const Sm90aSpec& spec) {
  Gemm design(spec);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
