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

// Named barriers (bar.sync ids; 0 is the CTA's): each consumer warpgroup's
// epilogue, and the ping-pong hand-over from one warpgroup's mainloop to the
// other's.
constexpr int kEpilogueBarrier = 1;  // + consumer warpgroup
constexpr int kOrderBarrier = 3;     // + the warpgroup that waits
// Stream-K: the consumers' partial sum is stored (they arrive, the
// producer warpgroup's second warp waits and publishes it); the consumers
// have seen another CTA's published sum (one thread waited for its flag).
constexpr int kPublishBarrier = 5;
constexpr int kPartialBarrier = 6;

// Everything both roles need: shapes, the persistent tile order
// (tile::TileScheduler, stream-K on top of it), the mbarrier pipeline.
class GemmKernel {
 public:
  GemmKernel(const Sm90aSpec& s)
      : s_(s), smem_(sm90a_smem(s)), k_(s.name(), Target::sm_90a), tile_m_(s.tile_m()) {}

  ptx::Module build();

 private:
  void read_params();
  void producer();
  void load_share(const Reg& map, const Reg& dst, const Reg& row0, int rows, bool k_major, int box_cols,
                  const Reg& part, int parts, const Reg& kx, const Reg& batch, const Reg& full,
                  const std::optional<Src>& mask);
  void consumer();
  void mainloop(const std::vector<Regs>& accs, const std::vector<Reg>& desc_a0, const Reg& desc_b0,
                const tile::WorkItem& w, tile::PipelineState& state, const Pred& leader,
                const std::function<void()>& after_last_wait = {});
  Reg partial_slot(const Reg& cta);
  Reg partial_flag(const Reg& cta);
  void store_partial(const Regs& acc);
  void publish_partial();
  void add_partials(const Regs& acc, const Reg& unit, const Reg& cw, const Pred& leader);
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
  ParamRef map_a_p_, map_b_p_, map_d_p_;
  Reg map_a_, map_b_, map_d_;
  Reg c_, c_rs_, c_cs_, c_bs_, d_, d_rs_, d_bs_, m_, n_, kdim_, l_, alpha_, beta_;
  Reg base_, tid_;
  std::optional<tile::MbarrierPipeline> pipe_;
  std::optional<tile::TileScheduler> sched_;
  // Stream-K: the workspace and the data-parallel units before the split ones.
  Reg workspace_;
  Reg amax_, thread_max_;  // with amax: its address, this thread's max |D| bits
};

ptx::Module GemmKernel::build() {
  if (s_.a_rows && (s_.a_rows % 8 != 0 || s_.a_rows > tile_m_ || !s_.a_k_major || s_.cluster_n > 1))
    throw OpsError("sm90a gemm: a_rows " + std::to_string(s_.a_rows) + " with tile_m " + std::to_string(tile_m_) +
                   (s_.a_k_major ? "" : ", M-major A") + (s_.cluster_n > 1 ? ", a cluster along N" : "") +
                   "; a multiple of 8 up to tile_m, for K-major A without a cluster along N");
  if (!s_.b_k_major && s_.tile_n % (s_.cluster_m * s_.b_box_cols()) != 0)
    throw OpsError("sm90a gemm: N-major B " + std::to_string(s_.tile_n) + " columns wide in boxes of " +
                   std::to_string(s_.b_box_cols()) + ", cluster " + std::to_string(s_.cluster_m) +
                   " along M; the boxes are multicast as many to each CTA of the pair");
  k_.maxntid(sm90a_threads(s_));
  k_.minnctapersm(1);  // a register cap at entry, which setmaxnreg needs
  if (s_.cluster_size() > 1) k_.reqnctapercluster(s_.cluster_size());
  read_params();
  Shared smem = k_.dynamic_shared("smem", 1024);
  // The 128-byte swizzle is a function of address bits 4-9: tiles start on
  // 1024-byte boundaries so that TMA's writes and wgmma's reads agree.
  base_ = (k_.address_of(smem) + 1023) & 0xFFFFFC00u;
  pipe_.emplace(tile::MbarrierArray(k_, base_, smem_.full, s_.stages),
                tile::MbarrierArray(k_, base_, smem_.empty, s_.stages));
  tid_ = k_.sreg(SReg::tid_x);
  map_a_ = k_.param_generic_address(map_a_p_);
  map_b_ = k_.param_generic_address(map_b_p_);
  map_d_ = k_.param_generic_address(map_d_p_);

  k_.if_then(tid_ == 0, [&] {
    k_.prefetch_tensormap(map_a_);
    k_.prefetch_tensormap(map_b_);
    k_.prefetch_tensormap(map_d_);
    // Every consumer warpgroup that reads a slot frees it (one in
    // ping-pong, all in cooperative), in every CTA of the cluster: the
    // producers of the other CTAs multicast into it.
    pipe_->init(1, (s_.pingpong ? 1 : s_.consumers) * s_.cluster_size());
    k_.fence_mbarrier_init();
  });
  k_.bar_sync(0);
  if (s_.cluster_size() > 1) {  // the peer's barriers are initialised before its multicasts reach them
    k_.barrier_cluster_arrive();
    k_.barrier_cluster_wait();
  }
  // Launched to overlap the stream's previous kernel (LaunchConfig::
  // overlap_previous), the prologue above ran beside its tail; global
  // memory (A, B, C, D, the workspace) only after that kernel completes.
  // The next kernel may be scheduled from here on: it too waits for this
  // one before it touches memory, and it takes only SMs this grid leaves.
  k_.griddepcontrol_launch_dependents();
  k_.griddepcontrol_wait();
  // Work units are a cluster's tiles, CTA rank r of a cluster taking tile
  // (r % cluster_m, r / cluster_m) of its unit, in groups of kGroupRows
  // units along M; with stream_k, the last units split by k-blocks between
  // CTAs, whose partial sums meet in the workspace (tile/tile_scheduler.hpp).
  sched_.emplace(k_,
                 tile::TileSchedulerOptions{.tile_m = tile_m_,
                                            .tile_n = s_.tile_n,
                                            .tile_k = kSm90aTileK,
                                            .cluster_m = s_.cluster_m,
                                            .cluster_n = s_.cluster_n,
                                            .group_rows = kGroupRows,
                                            .stream_k = s_.stream_k},
                 m_, n_, kdim_, l_);
  Reg wg = tid_ >> 7;
  k_.if_else(wg == s_.consumers, [&] { producer(); }, [&] { consumer(); });
  if (s_.cluster_size() > 1) {  // no CTA leaves while its peer may still multicast into it or arrive on it
    k_.barrier_cluster_arrive();
    k_.barrier_cluster_wait();
  }
  return k_.module();
}

void GemmKernel::read_params() {
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
  if (s_.stream_k) workspace_ = k_.param(u64, "workspace");
}

// One thread of the producer warpgroup issues every TMA load.
void GemmKernel::producer() {
  k_.setmaxnreg_dec(40);
  if (s_.stream_k) publish_partial();
  k_.if_then(tid_ == 128 * s_.consumers, [&] {
    tile::PipelineState state(k_, s_.stages);
    const Reg& stage = state.stage();
    // Only a_load_rows of A's tile arrive (the rest of its stage is not loaded).
    const std::uint32_t stage_bytes = s_.a_load_rows() * kRow + smem_.b_stage;
    // A multicast goes to the CTAs that share the operand: those of this
    // CTA's cluster row for A (same M tile), of its cluster column for B.
    std::optional<Src> mask_a, mask_b;
    if (s_.cluster_n > 1) {
      Reg bits = k_.mov(u16, 0);
      for (int j = 0; j < s_.cluster_n; ++j)
        k_.or_(bits, bits, k_.mov(u16, 1) << (sched_->rank_m() + j * s_.cluster_m));
      mask_a = bits;
    }
    if (s_.cluster_m > 1) {
      Reg bits = k_.mov(u16, 0);
      for (int i = 0; i < s_.cluster_m; ++i)
        k_.or_(bits, bits, k_.mov(u16, 1) << (sched_->rank_n() * s_.cluster_m + i));
      mask_b = bits;
    }
    sched_->for_each([&](const tile::WorkItem& w) {
      const tile::Tile& t = w.tile;
      k_.for_range(w.kb0, w.kb1, 1, [&](Reg kb) {
        Reg full = pipe_->full_barrier(state);
        pipe_->acquire(state);
        // The whole stage arrives here, this CTA's loads and its peers' multicasts.
        pipe_->expect_tx(full, stage_bytes);
        Reg kx = kb << 6;
        load_share(map_a_, base_ + smem_.a + stage * smem_.a_stage, t.m0, s_.a_load_rows(), s_.a_k_major, 64,
                   sched_->rank_n(), s_.cluster_n, kx, t.batch, full, mask_a);
        load_share(map_b_, base_ + smem_.b + stage * smem_.b_stage, t.n0, s_.tile_n, s_.b_k_major, s_.b_box_cols(),
                   sched_->rank_m(), s_.cluster_m, kx, t.batch, full, mask_b);
        ++state;
      });
    });
  });
}

// Share `part` of `parts` of one operand tile, `rows` of M or N by 64 of K,
// multicast to the CTAs of `mask` when given: K-major as a box of
// rows / parts x 64, MN-major as boxes of box_cols along M/N by 64 K rows,
// rows / box_cols / parts of them.
void GemmKernel::load_share(const Reg& map, const Reg& dst, const Reg& row0, int rows, bool k_major, int box_cols,
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

void GemmKernel::consumer() {
  k_.setmaxnreg_inc(232);
  if (s_.amax) thread_max_ = k_.mov(u32, 0u);
  Reg cw = tid_ >> 7;  // this consumer warpgroup
  Pred leader = (tid_ & 127) == 0;
  // Cooperative: the warpgroups share each tile, 64 rows each (rows 64·cw..).
  // Ping-pong: each takes whole tiles (every other one of the CTA's), 64
  // or 128 rows as one or two m64 accumulators, so that one's epilogue runs
  // under the other's mainloop.
  const int halves = s_.pingpong ? s_.wg_rows / 64 : 1;
  std::vector<Regs> accs;
  for (int h = 0; h < halves; ++h) accs.push_back(k_.regs(f32, s_.tile_n / 2, h == 0 ? "acc" : "acc_hi"));
  // K-major tiles are 8-row atoms of 128-byte rows (SBO = one atom, LBO
  // unused: encoded as 16); MN-major tiles are boxes of 64 K rows, 64
  // elements wide (32 for B in the 64-byte swizzle: Sm90aSpec::b_box_cols),
  // LBO = the next box along M/N, SBO = the next 8 K rows.
  Reg rows0 = s_.pingpong ? k_.mov(u32, 0) : cw * 64;  // the warpgroup's first row in the tile
  std::vector<Reg> desc_a0;
  for (int h = 0; h < halves; ++h) {
    Reg rows = rows0 + 64 * h;
    Reg a_smem = base_ + smem_.a + (s_.a_k_major ? rows * kRow : (rows >> 6) * mn_box_bytes(64));
    desc_a0.push_back(tile::warpgroup::smem_descriptor(k_, a_smem, s_.a_k_major ? 16 : mn_box_bytes(64), kAtom));
  }
  Reg b_smem = base_ + smem_.b;
  Reg desc_b0 = s_.b_k_major ? tile::warpgroup::smem_descriptor(k_, b_smem, 16, kAtom)
                             : tile::warpgroup::smem_descriptor(k_, b_smem, mn_box_bytes(s_.b_box_cols()),
                                                                mn_atom_bytes(s_.b_box_cols()), s_.b_swizzle());
  tile::PipelineState state(k_, s_.stages);
  if (!s_.pingpong) {
    sched_->for_each([&](const tile::WorkItem& w) {
      if (!w.partial) {
        mainloop(accs, desc_a0, desc_b0, w, state, leader);
        return epilogue(accs, w.tile, rows0, cw, leader);
      }
      // Predicates, not the piece's registers, carried through the mainloop.
      Pred partial = *w.partial != 0, joins = w.kb0 != 0;
      mainloop(accs, desc_a0, desc_b0, w, state, leader);
      k_.if_else(
          partial, [&] { store_partial(accs[0]); },
          [&] {
            k_.if_then(joins, [&] { add_partials(accs[0], w.tile.unit, cw, leader); });
            epilogue(accs, w.tile, rows0, cw, leader);
          });
    });
  } else {
    // The producer fills the ring tile after tile; warpgroup 1's first
    // k-block comes after warpgroup 0's first tile. A full barrier's parity
    // tells only its current phase from the one before (PTX ISA
    // 9.7.13.15.16), so a warpgroup must not wait on a slot a whole ring
    // ahead of the other's last wait: each mainloop starts only once the
    // other warpgroup has passed the last full-barrier wait of the tile
    // before (named barriers, bar.arrive by the one, bar.sync by the other).
    Reg other = cw ^ 1;
    auto turn = [&](const Reg& wg) { return tile::NamedBarrier(k_, wg + kOrderBarrier, 256); };
    k_.if_then(cw == 1, [&] { state.skip(sched_->kblocks()); });
    Pred first = k_.setp(Cmp::eq, cw, 0);  // warpgroup 0's first tile has no tile before it
    sched_->for_each(
        [&](const tile::WorkItem& w) {
          k_.if_then(!first, [&] { turn(cw).sync(); });
          k_.setp(first, Cmp::ne, cw, cw);  // false from here on
          Pred next = w.tile.unit + sched_->unit_step() < sched_->units();  // the other warpgroup's next tile
          mainloop(accs, desc_a0, desc_b0, w, state, leader, [&] { k_.if_then(next, [&] { turn(other).arrive(); }); });
          state.skip(sched_->kblocks());
          epilogue(accs, w.tile, rows0, cw, leader);
        },
        &cw, 2);
  }
  if (s_.amax) {  // |D| bits: unsigned order is value order, a positive NaN above +inf
    Reg warp_max = k_.reg(u32);
    k_.redux_sync(Redux::max, warp_max, thread_max_);
    k_.if_then((tid_ & 31u) == 0u, [&] { k_.red(Space::global, AtomOp::max, u32, at(amax_), warp_max); });
  }
  k_.if_then(leader, [&] { k_.bulk_wait_group(0); });
}

// `after_last_wait` runs (when given) once the last k-block's slot is full.
void GemmKernel::mainloop(const std::vector<Regs>& accs, const std::vector<Reg>& desc_a0, const Reg& desc_b0,
                          const tile::WorkItem& w, tile::PipelineState& state, const Pred& leader,
                          const std::function<void()>& after_last_wait) {
  // Each k16 step moves 32 bytes along a K-major row, or 16 K rows (two
  // 8-row atoms) down an MN-major box.
  const tile::warpgroup::KBlock block{.ab = dsl_type(s_.ab),
                                      .a_major = s_.a_k_major ? WgmmaMajor::k : WgmmaMajor::mn,
                                      .b_major = s_.b_k_major ? WgmmaMajor::k : WgmmaMajor::mn,
                                      .k_steps = kSm90aTileK / 16,
                                      .a_step = s_.a_k_major ? 32 : 2 * kAtom,
                                      .b_step = s_.b_k_major ? 32 : 2 * mn_atom_bytes(s_.b_box_cols())};
  const int groups = static_cast<int>(accs.size());  // commit groups per k-block
  Reg previous = k_.mov(u32, 0);  // the stage of the k-block before this one
  // Counted from 0: the piece's bounds need no registers in the loop.
  Reg count = w.kb1 - w.kb0;
  k_.for_range(0, count, 1, [&](Reg kb) {
    pipe_->wait(state);
    if (after_last_wait) k_.if_then(kb == count - 1, after_last_wait);
    Reg a_offset = k_.reg(u64), db = k_.reg(u64);
    k_.cvt(a_offset, state.stage() * (smem_.a_stage >> 4));
    k_.cvt(db, state.stage() * (smem_.b_stage >> 4));
    k_.add(db, db, desc_b0);
    Pred accumulate = kb != 0;
    for (int h = 0; h < groups; ++h)
      tile::warpgroup::mma_k_block(k_, block, accs[h], a_offset + desc_a0[h], db, accumulate);
    // One k-block's groups stay in flight so the tensor cores never wait on
    // this warpgroup: once the previous k-block's are done, its slot is free.
    k_.wgmma_wait_group(groups);
    k_.if_then(leader && accumulate, [&] { pipe_->release(previous, s_.cluster_size()); });
    k_.mov(previous, state.stage());
    ++state;
  });
  k_.wgmma_wait_group(0);
  k_.if_then(leader, [&] { pipe_->release(previous, s_.cluster_size()); });
}

// The workspace: one tile of f32 partial sums per CTA, then one u32 flag
// per CTA (zero when no sum is waiting). A thread's registers 4j..4j+3 sit
// at (j · threads + thread) · 16 bytes of its CTA's slot, so that each
// vector store or load of a warp covers 512 contiguous bytes.
Reg GemmKernel::partial_slot(const Reg& cta) {
  Reg slot = k_.reg(u64);
  k_.mul_wide(slot, cta, static_cast<std::uint32_t>(tile_m_ * s_.tile_n * 4));
  return workspace_ + slot;
}

Reg GemmKernel::partial_flag(const Reg& cta) {
  Reg offset = k_.reg(u64), index = k_.reg(u64);
  k_.mul_wide(offset, sched_->unit_step(), static_cast<std::uint32_t>(tile_m_ * s_.tile_n * 4));
  k_.mul_wide(index, cta, 4);
  return workspace_ + offset + index;
}

// The consumers store their sum and arrive; they do not wait for it to be
// published (publish_partial does, in the producer warpgroup).
void GemmKernel::store_partial(const Regs& acc) {
  const int threads = 128 * s_.consumers;
  Reg thread_offset = k_.reg(u64);
  k_.mul_wide(thread_offset, tid_, 16);
  Reg address = partial_slot(sched_->first_unit()) + thread_offset;
  for (std::size_t i = 0; i < acc.size(); i += 4)
    k_.st(Space::global, f32, at(address, static_cast<std::int64_t>(i / 4 * threads * 16)),
          Regs{acc[i], acc[i + 1], acc[i + 2], acc[i + 3]});
  tile::NamedBarrier(k_, kPublishBarrier, threads + 32).arrive();
}

// The producer warpgroup's second warp, idle otherwise, waits for the
// consumers' stores (bar.sync after their bar.arrive orders them before it,
// PTX ISA 9.7.13.1) and raises the CTA's flag behind a gpu-scope fence: the
// release pattern of the memory model (PTX ISA 8.9.3) that add_partials'
// acquire pairs with. A CTA has one partial piece at most.
void GemmKernel::publish_partial() {
  Reg warp = (tid_ >> 5) & 3;
  k_.if_then((warp == 1) && sched_->stream_k_run().partial, [&] {
    tile::NamedBarrier(k_, kPublishBarrier, 128 * s_.consumers + 32).sync();
    k_.if_then((tid_ & 31) == 0, [&] {
      k_.fence(FenceSem::acq_rel, Scope::gpu);
      k_.st(Space::global, u32, at(partial_flag(sched_->first_unit())), 1, {.volatile_ = true});
    });
  });
}

// Adds to `acc` the partial sums of the CTAs before this one whose runs end
// inside `unit` (from the nearest back, a fixed order: the result is the same
// every run). One thread waits for each flag and clears it for the next
// launch; the named barrier passes its acquire on to the others. The sums
// come through the warpgroup's epilogue buffer by cp.async, each thread
// staging its own: loaded straight into registers they would arrive one at a
// time, the accumulators leaving no registers to have more loads in flight.
void GemmKernel::add_partials(const Regs& acc, const Reg& unit, const Reg& cw, const Pred& leader) {
  const int threads = 128 * s_.consumers;
  const std::uint32_t staged = smem_.epilogue_per_consumer / 128;  // bytes per thread per round
  const std::size_t round = staged / 4;                            // accumulators per round
  k_.if_then(leader, [&] { k_.bulk_wait_group_read(0); });  // the last tile's store has read the buffer
  tile::NamedBarrier(k_, cw + kEpilogueBarrier, 128).sync();
  Reg unit_begin = (unit - sched_->dp_units()) * sched_->kblocks();
  Reg cta = k_.mov(u32, sched_->first_unit()), start = k_.reg(u32);
  k_.while_loop(
      [&] {
        k_.mov(start, sched_->stream_k_start(cta));
        return (cta != 0) && (start > unit_begin);  // CTA cta - 1's run ends inside the unit
      },
      [&] {
        k_.sub(cta, cta, 1);
        k_.if_then(sched_->stream_k_start(cta) < start, [&] {  // an empty run (fewer k-blocks than CTAs) leaves no sum
          k_.if_then(tid_ == 0, [&] {
            Reg flag = partial_flag(cta), raised = k_.reg(u32);
            k_.while_loop(
                [&] {
                  k_.ld(Space::global, u32, raised, at(flag), {.volatile_ = true});
                  return raised == 0;
                },
                [] {});
            k_.fence(FenceSem::acq_rel, Scope::gpu);
            k_.st(Space::global, u32, at(flag), 0);
          });
          tile::NamedBarrier(k_, kPartialBarrier, threads).sync();
          Reg thread_offset = k_.reg(u64);
          k_.mul_wide(thread_offset, tid_, 16);
          Reg from = partial_slot(cta) + thread_offset;
          Reg to = base_ + smem_.epilogue + cw * smem_.epilogue_per_consumer + (tid_ & 127) * staged;
          Regs sum = k_.regs(f32, 2, "partial");
          for (std::size_t first = 0; first < acc.size(); first += round) {
            for (std::uint32_t q = 0; q < staged / 16; ++q)  // accumulators first + 4q.. are chunk (first / 4 + q)
              k_.cp_async(CpAsyncCache::cg, 16, at(to, q * 16),
                          at(from, static_cast<std::int64_t>((first / 4 + q) * threads * 16)));
            k_.cp_async_commit();
            k_.cp_async_wait_all();
            for (std::size_t i = 0; i < round; i += 2) {
              k_.ld(Space::shared, f32, sum, at(to, static_cast<std::int64_t>(i * 4)));
              for (std::size_t j = 0; j < 2; ++j) k_.add(acc[first + i + j], acc[first + i + j], sum[j]);
            }
          }
        });
      });
}

// alpha·acc[i], alpha·acc[i + 1] (+ beta·C) for accumulator pair i of this
// thread: row `row` of the tile, columns 8·(i/4) + 2·(lane%4) + {0, 1}; with
// amax, the magnitudes of those inside D folded into the thread's maximum
// (past M or N a sum may be inf x 0 = NaN from A's or B's zero fill).
std::pair<Reg, Reg> GemmKernel::output_pair(const Regs& acc, int i, const tile::Tile& t, const Reg& row,
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
void GemmKernel::add_c(const Reg& v, const Reg& row_offset, const Reg& col, const Pred& inside) {
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
void GemmKernel::epilogue(const std::vector<Regs>& accs, const tile::Tile& t, const Reg& rows0, const Reg& cw,
                          const Pred& leader) {
  const int es = runtime::bits(s_.d) / 8;
  const int box_cols = sm90a_store_box_cols(s_);
  const int width = s_.epilogue_width();
  const int boxed = width / box_cols * box_cols;  // columns of a chunk through whole store boxes
  const std::uint32_t half_bytes = 64 * boxed * es;  // one 64-row accumulator's boxes of a chunk
  Reg epi = base_ + smem_.epilogue + cw * smem_.epilogue_per_consumer;
  const tile::NamedBarrier chunk_barrier(k_, cw + kEpilogueBarrier, 128);
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
void GemmKernel::store_tail(const Regs& acc, int col0, int col1, const tile::Tile& t, const Reg& rows0,
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
  m.a = 0;
  m.b = m.a + s.stages * m.a_stage;
  m.epilogue = m.b + s.stages * m.b_stage;
  m.full = m.epilogue + s.consumers * m.epilogue_per_consumer;
  m.empty = m.full + 8 * s.stages;
  m.bytes = m.empty + 8 * s.stages + 1024;
  return m;
}

ptx::Module build_sm90a_gemm(const Sm90aSpec& spec) { return GemmKernel(spec).build(); }

}  // namespace warpforge::ops
