// The warp-specialized kernel template of Hopper (sm_90a) kernels: one home
// for the skeleton every such kernel repeats, so that a kernel is a *design*
// of three steps and its configuration.
//
// The template owns:
// - thread roles: consumer warpgroups 0 .. consumers-1, then the producer
//   warpgroup (its first thread issues the loads), then the design's helper
//   warpgroups, and their setmaxnreg split (PTX ISA 9.7.19.5: the producer
//   and helpers give registers back, the consumers take them);
// - the mbarrier pipeline (MbarrierPipeline) in the design's shared-memory
//   carve-up (SharedLayout), its initialisation, and the stage walk of
//   both roles (PipelineState: acquire, expect_tx, wait, release);
// - barriers by handle: mbarrier arrays at layout offsets, named barriers
//   handed out by id (no integer barrier id in a kernel);
// - the persistent loop over a work source (work_source.hpp) in its
//   schedules: cooperative (the consumers share each item) or ping-pong
//   (two consumers take alternate items, one's finish under the other's
//   mainloop, ordered by named barriers), with the source's split-K or
//   stream-K pieces, whose partial sums meet in a workspace in a fixed
//   order (split_k_reduction.hpp, stream_k_reduction.hpp);
// - clusters: reqnctapercluster, the multicast masks, the start barrier (no
//   multicast before every peer initialised its barriers) and the end
//   barrier (no CTA leaves while a peer may still write into it);
// - griddepcontrol: a kernel launched to overlap its predecessor runs its
//   prologue beside that kernel's tail and waits before any global memory.
//
// A design (WarpSpecializedDesign) supplies its configuration as values
// checked when the kernel is built (WarpSpecializedConfig; TileError names
// what is wrong) and its steps: load a stage (producer), compute on a stage
// (consumer), finish a work item (the epilogue), plus its parameters, its
// own buffers and barriers, and its work source. The bf16 GEMM
// (src/ops/gemm/sm90a_kernel.cpp) is the reference design:
//
//   class Gemm final : public tile::WarpSpecializedDesign {
//     WarpSpecializedConfig config() const;  // roles, stages, cluster, layout
//     void params(WarpSpecialized&);         // tensor maps, sizes, alpha
//     std::unique_ptr<WorkSource> work_source(WarpSpecialized&);  // a TileScheduler
//     void load(const LoadStep& s);          // TMA A, B of s.kb into s.state.stage()
//     int compute(const ComputeStep& s);     // wgmma on the slot; commit groups
//     void finish(const WorkItem& w);        // the tile to D
//   };
//   ptx::Module m = tile::build_warp_specialized(gemm);
//
// A design whose schedule is its own keeps the template's skeleton and
// overrides a role: GemmAmax's FP8 design runs the scale conversion in the
// producer's other warps (producer) and a software pipeline across stages
// (mainloop); its converting design's producer warpgroup converts and loads
// from a WorkCursor; its dequantizing design adds helper warpgroups and a
// second ring (src/ops/gemm_amax/sm90a_gemm_amax_*.cpp).
//
// How the next designs map onto it:
// - Attention (FlashAttention-3 forward): a work item is (batch, head,
//   block of 128 query rows): the design's WorkSource puts them in
//   tile.batch, tile.n0 (the head) and tile.m0 (the first query row) and
//   sets [kb0, kb1) to the item's KV blocks (causal: up to the diagonal;
//   varlen: from the sequence lengths it loads from device memory, in a
//   register). The producer's per-item step (load_item) loads the Q tile
//   once into a design buffer (a SharedLayout buffer) on the design's own
//   mbarrier (an MbarrierArray from ws.mbarriers, initialised in
//   initialize()); its load step loads K and V of one KV block per stage.
//   Two consumer warpgroups in ping-pong, each on its own item (the
//   source's pingpong_skip gives the other's KV block count); the design
//   orders their softmax and GEMMs with named barriers from
//   ws.warpgroup_barriers. Its compute step runs S = Q·Kᵀ, the online
//   softmax and O += P·V (P from registers: warpgroup::mma_k_block's
//   register form) and returns its commit groups; finish writes O and the
//   log-sum-exp.
// - Grouped GEMM (MoE): the design's WorkSource walks the tiles of G groups
//   whose int32 cumulative row offsets it reads from device memory inside
//   the kernel (nothing goes back to the host): tile.batch is the group,
//   tile.m0 the tile's first row, `extra` the group's end row for the
//   epilogue's row limit. Compute may convert 4-bit weight codes to bf16 in
//   registers and run wgmma with A from registers: the template assumes
//   nothing about where A and B come from, only that compute returns the
//   commit groups that still read the slot.
// - Split-K and stream-K: the TileScheduler's options; the template stores,
//   publishes and adds the partial sums in a fixed order (SplitKReduction:
//   the first split adds the others'; StreamKReduction: the CTA that ends a
//   tile adds those of the CTAs before it) from the design's partial_sums()
//   (config.split_k, config.stream_k).
// - Ping-pong: ConsumerSchedule::pingpong; the template alternates the
//   source's items between the two consumers and orders their mainloops
//   (the template's stage walk: a ping-pong design computes per stage).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "warpforge/dsl/kernel.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/split_k_reduction.hpp"
#include "warpforge/tile/stream_k_reduction.hpp"
#include "warpforge/tile/work_source.hpp"

namespace warpforge::tile {

// The carve-up of a kernel's dynamic shared memory, on the host: regions
// in the order they are taken, each at the next offset its alignment
// allows, from a base the kernel aligns to 1024 bytes (the 128-byte
// swizzle's repeat, PTX ISA 9.7.9.27 tensor copies). The same object sizes
// the launch (launch_bytes) and places the kernel's buffers.
class SharedLayout {
 public:
  // What the kernel aligns its base to, and so the slack a launch requests.
  static constexpr std::uint32_t kBaseAlignment = 1024;

  // `stages` slots of `stage_bytes` each, stage_bytes apart: the offset of slot 0.
  std::uint32_t ring(std::uint32_t stage_bytes, int stages, std::uint32_t align = kBaseAlignment);
  // One buffer: its offset.
  std::uint32_t buffer(std::uint32_t bytes, std::uint32_t align = 16);
  // `count` mbarrier objects (8 bytes, aligned to 8; PTX ISA 9.7.13.15.1): the first's offset.
  std::uint32_t mbarriers(int count);
  // Bytes taken so far, and what a launch requests (with the base's slack).
  std::uint32_t used() const { return end_; }
  std::uint32_t launch_bytes() const { return end_ + kBaseAlignment; }

 private:
  std::uint32_t end_ = 0;
};

enum class ConsumerSchedule {
  // The consumer warpgroups share each work item (each its rows of it).
  cooperative,
  // Two consumer warpgroups take alternate items whole; each starts an
  // item's mainloop once the other has passed the last full-barrier wait of
  // its item before (named barriers), so that one's finish runs under the
  // other's mainloop and no one waits on a slot a whole ring ahead.
  pingpong,
};

struct WarpSpecializedConfig {
  int consumers = 2;  // consumer warpgroups: warpgroups 0 .. consumers-1
  int helpers = 0;    // the design's helper warpgroups, after the producer warpgroup
  ConsumerSchedule schedule = ConsumerSchedule::cooperative;
  // The pipeline: `stages` slots whose full and empty barrier arrays sit at
  // these SharedLayout offsets.
  int stages = 0;
  std::uint32_t full_barriers = 0, empty_barriers = 0;
  // Arrivals that free a slot (0: one per consumer warpgroup that reads it,
  // its leader's, from every CTA of the cluster, whose producers multicast
  // into the slot).
  int empty_arrivals = 0;
  // The transaction bytes a stage's loads bring (TMA, multicasts included):
  // the producer expects them on the slot's full barrier before its load step.
  std::uint32_t stage_bytes = 0;
  // CTAs per cluster along M and N (1x1: no cluster).
  int cluster_m = 1, cluster_n = 1;
  // setmaxnreg targets (PTX ISA 9.7.19.5: 24..256, a multiple of 8; 0 keeps
  // the entry's): the producer warpgroup and helpers give registers back,
  // the consumers take them.
  int producer_registers = 40, consumer_registers = 232, helper_registers = 0;
  // CTAs an SM (.minnctapersm): ptxas caps every thread at entry to
  // entry_registers(threads, ctas_per_sm), and setmaxnreg.inc takes only
  // registers the CTA's own warps gave back, so the targets must fit
  // threads x that cap (checked with more than one: more would wait
  // forever once other CTAs fill the SM).
  int ctas_per_sm = 1;
  // Launched to overlap the stream's previous kernel: griddepcontrol.launch_dependents
  // and .wait after the prologue, before the work source reads memory.
  bool dependent_launch = true;
  // With a stream-K source: its pieces' partial sums meet in a workspace
  // (a kernel parameter the template appends, "workspace";
  // stream_k_reduction.hpp), each consumer warpgroup staging the sums it
  // adds through its buffer of staging_bytes, warpgroup w's at
  // SharedLayout offset staging + w · staging_bytes.
  struct StreamK {
    std::uint32_t partial_bytes;  // one CTA's sums: every consumer thread's partial_sums()
    std::uint32_t staging, staging_bytes;
  };
  std::optional<StreamK> stream_k;
  // With a split-K source (TileScheduler splits > 1): every consumer
  // warpgroup's partial sums (partial_bytes of them) meet in the workspace
  // parameter the template appends (split_k_reduction.hpp).
  struct SplitK {
    std::uint32_t partial_bytes;  // one consumer warpgroup's partial_sums()
  };
  std::optional<SplitK> split_k;
};

class WarpSpecialized;

// The producer's step: the loads of k-block `kb` of `item` into slot
// state.stage(), signalling `full` (whose transaction bytes the template
// expected already).
struct LoadStep {
  const WorkItem& item;
  const dsl::Reg& kb;
  const PipelineState& state;
  const dsl::Reg& full;
};

// The consumers' step: compute on slot state.stage() (full), k-block `kb`
// of `item` counted from its first (0 .. kb1 - kb0 - 1).
class ComputeStep {
 public:
  ComputeStep(const WorkItem& item, const dsl::Reg& kb, const PipelineState& state)
      : item(item), kb(kb), state(state) {}
  const WorkItem& item;
  const dsl::Reg& kb;
  const PipelineState& state;
  // kb != 0: whether this k-block adds to the accumulators (false on the
  // item's first: D = A·B). Emitted where first asked for, then reused
  // (also by the template after the step): ask outside any branch.
  const dsl::Pred& accumulate() const;

 private:
  mutable std::optional<dsl::Pred> accumulate_;
};

// What a design supplies. Hooks run in this order (each emitting its code
// where the template calls it): params, prologue, initialize (thread 0),
// work_source; then the producer warpgroup's producer (by default the
// template's loads: load_item and load per item and k-block, in its first
// thread), and the consumers' consumer_setup, mainloop per item (by
// default the template's stage walk: compute per k-block), finish per
// item, consumer_teardown; helpers' helper.
class WarpSpecializedDesign {
 public:
  virtual ~WarpSpecializedDesign() = default;
  virtual dsl::Kernel& kernel() = 0;
  virtual WarpSpecializedConfig config() const = 0;

  // Every thread, before the roles split. params: the kernel's parameters
  // in their order (with stream-K the template appends the workspace's).
  virtual void params(WarpSpecialized& ws) = 0;
  // After the shared-memory base and %tid.x: the design's barriers
  // (ws.named_barrier, ws.warpgroup_barriers), addresses every role uses.
  virtual void prologue(WarpSpecialized&) {}
  // Thread 0, before the pipeline's barriers are initialised: tensor-map
  // prefetches, the design's own mbarriers' initialisation.
  virtual void initialize(WarpSpecialized&) {}
  // After the start barrier (and griddepcontrol.wait): the order of work.
  virtual std::unique_ptr<WorkSource> work_source(WarpSpecialized& ws) = 0;

  // The producer warpgroup, after its setmaxnreg: by default
  // ws.load_stages(), the template's loads in its first thread. A design
  // whose other producer warps have work (or whose producer warpgroup is a
  // role of its own, which then loads as it sees fit) says so here.
  virtual void producer(WarpSpecialized& ws);
  // The template's loads (its first thread): per item, before its k-blocks
  // (e.g. a tile loaded once per item on the design's own barrier); per
  // k-block. The default load refuses (TileError): a design that keeps the
  // template's loads supplies it.
  virtual void load_item(const WorkItem&) {}
  virtual void load(const LoadStep& s);

  // Consumers: their registers (accumulators, descriptors) after
  // setmaxnreg; per item, its mainloop: by default ws.walk, the template's
  // stage walk, which calls compute per k-block (returning the wgmma commit
  // groups it issued: the template keeps them in flight and frees the slot
  // before once they completed; the default compute refuses, TileError). A
  // design with a schedule of its own (a software pipeline across stages,
  // a second ring) walks the item's stages itself from `state` (the
  // pipeline's consumer state, which it leaves after the item's last
  // slot); its waits, releases and wgmma completion are then its own.
  // Then per item finish, once the mainloop is over; at the end, teardown.
  virtual void consumer_setup(WarpSpecialized&) {}
  virtual void mainloop(WarpSpecialized& ws, const WorkItem& w, PipelineState& state);
  virtual int compute(const ComputeStep& s);
  virtual void finish(const WorkItem& w) = 0;
  virtual void consumer_teardown(WarpSpecialized&) {}

  // Stream-K and split-K: the accumulators a piece stores and adds (the
  // default refuses); stream-K: what makes the warpgroup's staging buffer
  // free before the reduction writes it (e.g. the last epilogue's store has
  // read it).
  virtual const dsl::Regs& partial_sums() const;
  virtual void acquire_staging(WarpSpecialized&) {}

  // The helper warpgroups (consumers + 1 ..), after their setmaxnreg.
  virtual void helper(WarpSpecialized&) {}
};

// The template at work: what the design's hooks may ask of it.
class WarpSpecialized {
 public:
  // Reads and checks the design's configuration (TileError names a value
  // outside its rule).
  explicit WarpSpecialized(WarpSpecializedDesign& design);
  ptx::Module build();

  dsl::Kernel& kernel() const { return *k_; }
  const WarpSpecializedConfig& config() const { return c_; }
  int threads() const { return 128 * (c_.consumers + 1 + c_.helpers); }
  // ptxas's register cap a thread at entry for `threads` a CTA and
  // `ctas_per_sm` CTAs an SM: the 64K-register file shared out, rounded
  // down to its allocation unit of 8 a thread.
  static int entry_registers(int threads, int ctas_per_sm);
  int cluster_size() const { return c_.cluster_m * c_.cluster_n; }
  // From the prologue on: the 1024-aligned shared-memory base (u32) and %tid.x.
  const dsl::Reg& smem_base() const;
  const dsl::Reg& tid() const;
  const MbarrierPipeline& pipeline() const;
  // `count` mbarriers at a SharedLayout offset (the design's own).
  MbarrierArray mbarriers(std::uint32_t offset, int count) const;
  // A named barrier of `threads` threads, on the next free id.
  NamedBarrier named_barrier(int threads);
  // One named barrier of `threads` threads per consumer warpgroup.
  NamedBarrierSet warpgroup_barriers(int threads);
  // From work_source on.
  const WorkSource& source() const;
  // With stream-K or split-K, from params on: the workspace parameter.
  const dsl::Reg& workspace() const;

  // The producer's loads (the default producer): in the producer
  // warpgroup's first thread, per item load_item, per k-block: acquire the
  // slot, expect its stage_bytes, load.
  void load_stages();
  // The consumers' stage walk of one item (the default mainloop): each
  // k-block's slot waited for, computed on, and freed once the wgmma of the
  // next k-block are issued and its own completed.
  void walk(const WorkItem& w, PipelineState& state,
            const std::function<void()>& after_last_wait = {});

  // The consumer role: this warpgroup's index (tid >> 7, u32) and whether
  // this thread is its first; emitted where first asked for in
  // consumer_setup, else right after it.
  const dsl::Reg& warpgroup();
  const dsl::Pred& leader();
  // The producer thread, in a cluster: the multicast masks (u16) of the
  // CTAs that share this CTA's M tile (its cluster row: an A tile) and its
  // N tile (its cluster column: a B tile); nullopt without CTAs to share with.
  const std::optional<dsl::Src>& row_multicast() const { return row_mask_; }
  const std::optional<dsl::Src>& column_multicast() const { return column_mask_; }

 private:
  void producer();
  void consumer();
  void cooperative(PipelineState& state);
  void pingpong(PipelineState& state);

  WarpSpecializedDesign* d_;
  WarpSpecializedConfig c_;
  dsl::Kernel* k_;
  dsl::Reg base_, tid_, workspace_;
  std::optional<MbarrierPipeline> pipe_;
  std::unique_ptr<WorkSource> source_;
  int next_barrier_ = 1;                  // 0 is the CTA's (bar.sync 0)
  std::optional<NamedBarrierSet> order_;  // ping-pong
  std::optional<StreamKReduction> stream_k_;
  std::optional<SplitKReduction> split_k_;
  std::optional<dsl::Reg> warpgroup_;
  std::optional<dsl::Pred> leader_;
  std::optional<dsl::Src> row_mask_, column_mask_;
};

inline ptx::Module build_warp_specialized(WarpSpecializedDesign& design) {
  return WarpSpecialized(design).build();
}

}  // namespace warpforge::tile
