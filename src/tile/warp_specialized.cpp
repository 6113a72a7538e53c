#include "warpforge/tile/warp_specialized.hpp"

#include <algorithm>
#include <string>

#include "warpforge/error.hpp"
#include "warpforge/tile/tile_scheduler.hpp"

namespace warpforge::tile {

using namespace dsl;

namespace {

std::uint32_t align_up(std::uint32_t offset, std::uint32_t align) {
  return (offset + align - 1) / align * align;
}

}  // namespace

std::uint32_t SharedLayout::ring(std::uint32_t stage_bytes, int stages, std::uint32_t align) {
  if (stages < 1)
    throw TileError("shared-memory ring of " + std::to_string(stages) +
                    " stages: it needs at least 1");
  const std::uint32_t offset = align_up(end_, align);
  end_ = offset + static_cast<std::uint32_t>(stages) * stage_bytes;
  return offset;
}

std::uint32_t SharedLayout::buffer(std::uint32_t bytes, std::uint32_t align) {
  const std::uint32_t offset = align_up(end_, align);
  end_ = offset + bytes;
  return offset;
}

std::uint32_t SharedLayout::mbarriers(int count) {
  return buffer(static_cast<std::uint32_t>(count) * MbarrierArray::kBytes, MbarrierArray::kBytes);
}

// Emitted once: the step's later questions reuse the predicate.
const Pred& ComputeStep::accumulate() const {
  if (!accumulate_) accumulate_ = kb != 0;
  return *accumulate_;
}

const Regs& WarpSpecializedDesign::partial_sums() const {
  throw TileError(
      "split-K or stream-K for a design without partial sums: it overrides partial_sums()");
}

void WarpSpecializedDesign::producer(WarpSpecialized& ws) {
  ws.load_stages();
}

void WarpSpecializedDesign::load(const LoadStep&) {
  throw TileError("kernel '" + kernel().name() +
                  "': the template's loads for a design without a load step");
}

void WarpSpecializedDesign::mainloop(WarpSpecialized& ws, const WorkItem& w, PipelineState& state) {
  ws.walk(w, state);
}

int WarpSpecializedDesign::compute(const ComputeStep&) {
  throw TileError("kernel '" + kernel().name() +
                  "': the template's stage walk for a design without a compute step (or a mainloop "
                  "of its own)");
}

Pred WorkSource::has_successor(const WorkItem&) const {
  throw TileError(
      "a ping-pong schedule over a work source that does not say its successors (has_successor)");
}

Src WorkSource::pingpong_skip(const WorkItem*) const {
  throw TileError(
      "a ping-pong schedule over a work source that does not say its items' k-blocks "
      "(pingpong_skip)");
}

WarpSpecialized::WarpSpecialized(WarpSpecializedDesign& design)
    : d_(&design), c_(design.config()), k_(&design.kernel()) {
  auto refuse = [&](const std::string& what, const std::string& rule) {
    throw TileError("warp-specialized kernel '" + k_->name() + "': " + what + "; " + rule);
  };
  if (c_.consumers < 1 || c_.helpers < 0 || threads() > 1024)
    refuse(std::to_string(c_.consumers) + " consumer and " + std::to_string(c_.helpers) +
               " helper warpgroups",
           "at least one consumer, and with the producer at most 8 warpgroups (1024 threads)");
  if (c_.schedule == ConsumerSchedule::pingpong && c_.consumers != 2)
    refuse("ping-pong with " + std::to_string(c_.consumers) + " consumer warpgroups",
           "ping-pong takes 2");
  if (c_.stages < 1) refuse(std::to_string(c_.stages) + " pipeline stages", "at least 1");
  if (c_.cluster_m < 1 || c_.cluster_n < 1 || cluster_size() > 16)
    refuse("cluster " + std::to_string(c_.cluster_m) + "x" + std::to_string(c_.cluster_n),
           "each side at least 1, 16 CTAs at most");
  for (int r : {c_.producer_registers, c_.consumer_registers, c_.helper_registers})
    if (r != 0 && (r < 24 || r > 256 || r % 8 != 0))
      refuse("setmaxnreg " + std::to_string(r),
             "0 (none) or a multiple of 8 in 24..256 (PTX ISA 9.7.19.5)");
  if (c_.ctas_per_sm < 1 || c_.ctas_per_sm > 32)
    refuse(std::to_string(c_.ctas_per_sm) + " CTAs an SM", "1 to 32 (.minnctapersm)");
  const int cap = entry_registers(threads(), c_.ctas_per_sm);
  const auto or_cap = [&](int r) { return r ? r : cap; };
  const int wanted = 128 * (or_cap(c_.producer_registers) + c_.consumers * or_cap(c_.consumer_registers) +
                            c_.helpers * or_cap(c_.helper_registers));
  // Checked at one CTA an SM too: setmaxnreg.inc draws on the registers the
  // CTA was launched with (threads x the entry cap), not on the rest of the
  // file, so targets past it wait forever (PTX ISA 9.7.19.5; the attention
  // backward's 32 + 2 x 240 at 384 threads hung on an H200, session 9).
  if (wanted > cap * threads())
    refuse("setmaxnreg targets of " + std::to_string(wanted) + " registers a CTA at " +
               std::to_string(c_.ctas_per_sm) + (c_.ctas_per_sm == 1 ? " CTA an SM" : " CTAs an SM"),
           "at most " + std::to_string(cap) + " x " + std::to_string(threads()) +
               " threads (the entry cap: setmaxnreg.inc takes only what the CTA gave back)");
  if (c_.stream_k && c_.split_k) refuse("stream-K and split-K", "a source takes one or the other");
  if (c_.split_k && c_.schedule != ConsumerSchedule::cooperative)
    refuse("split-K with ping-pong consumers", "split-K takes the cooperative schedule");
  if (c_.stream_k && (c_.schedule != ConsumerSchedule::cooperative ||
                      c_.stream_k->staging_bytes % (128 * 16) != 0))
    refuse(
        "stream-K with " +
            std::string(c_.schedule == ConsumerSchedule::pingpong ? "ping-pong" : "cooperative") +
            " consumers staging " + std::to_string(c_.stream_k->staging_bytes) + " bytes",
        "stream-K takes the cooperative schedule and a multiple of 2048 staging bytes (16 a "
        "thread)");
}

int WarpSpecialized::entry_registers(int threads, int ctas_per_sm) {
  return std::min(255, 65536 / (threads * ctas_per_sm) / 8 * 8);
}

const Reg& WarpSpecialized::smem_base() const {
  return base_;
}
const Reg& WarpSpecialized::tid() const {
  return tid_;
}
const MbarrierPipeline& WarpSpecialized::pipeline() const {
  return *pipe_;
}

MbarrierArray WarpSpecialized::mbarriers(std::uint32_t offset, int count) const {
  return MbarrierArray(*k_, base_, offset, count);
}

NamedBarrier WarpSpecialized::named_barrier(int threads) {
  const NamedBarrierSet one(*k_, next_barrier_, 1, threads);  // checks the id is left
  ++next_barrier_;
  return NamedBarrier(*k_, one.first(), threads);
}

NamedBarrierSet WarpSpecialized::warpgroup_barriers(int threads) {
  NamedBarrierSet set(*k_, next_barrier_, c_.consumers, threads);
  next_barrier_ += c_.consumers;
  return set;
}

const WorkSource& WarpSpecialized::source() const {
  if (!source_)
    throw TileError("kernel '" + k_->name() +
                    "': the work source is asked for before work_source()");
  return *source_;
}

const Reg& WarpSpecialized::workspace() const {
  if (!c_.stream_k && !c_.split_k)
    throw TileError("kernel '" + k_->name() + "': a workspace without split-K or stream-K");
  return workspace_;
}

const Reg& WarpSpecialized::warpgroup() {
  if (!warpgroup_) warpgroup_ = tid_ >> 7;
  return *warpgroup_;
}

const Pred& WarpSpecialized::leader() {
  if (!leader_) leader_ = (tid_ & 127) == 0;
  return *leader_;
}

ptx::Module WarpSpecialized::build() {
  Kernel& k = *k_;
  k.maxntid(static_cast<std::uint32_t>(threads()));
  k.minnctapersm(static_cast<std::uint32_t>(c_.ctas_per_sm));  // a register cap at entry, which setmaxnreg needs
  if (cluster_size() > 1) k.reqnctapercluster(static_cast<std::uint32_t>(cluster_size()));
  d_->params(*this);
  if (c_.stream_k || c_.split_k) workspace_ = k.param(u64, "workspace");
  Shared smem = k.dynamic_shared("smem", SharedLayout::kBaseAlignment);
  // The 128-byte swizzle is a function of address bits 4-9: tiles start on
  // 1024-byte boundaries so that TMA's writes and wgmma's reads agree.
  base_ = (k.address_of(smem) + 1023) & 0xFFFFFC00u;
  pipe_.emplace(MbarrierArray(k, base_, c_.full_barriers, c_.stages),
                MbarrierArray(k, base_, c_.empty_barriers, c_.stages));
  tid_ = k.sreg(SReg::tid_x);
  d_->prologue(*this);
  if (c_.schedule == ConsumerSchedule::pingpong) order_ = warpgroup_barriers(256);
  // Stream-K: the consumers' partial sum is stored (they arrive, the
  // producer warpgroup's second warp waits and publishes it); the consumers
  // have seen another CTA's published sum (one thread waited for its flag).
  std::optional<NamedBarrier> publish, partial;
  if (c_.stream_k) {
    publish = named_barrier(128 * c_.consumers + 32);
    partial = named_barrier(128 * c_.consumers);
  }
  std::optional<NamedBarrierSet> split_barriers;  // split-K: each consumer warpgroup's
  if (c_.split_k) split_barriers = warpgroup_barriers(128);
  k.if_then(tid_ == 0, [&] {
    d_->initialize(*this);
    // Every consumer warpgroup that reads a slot frees it (one in
    // ping-pong, all in cooperative), in every CTA of the cluster: the
    // producers of the other CTAs multicast into it.
    const int readers = c_.schedule == ConsumerSchedule::pingpong ? 1 : c_.consumers;
    pipe_->init(1, c_.empty_arrivals ? c_.empty_arrivals : readers * cluster_size());
    k.fence_mbarrier_init();
  });
  k.bar_sync(0);
  if (cluster_size() >
      1) {  // the peers' barriers are initialised before their multicasts reach them
    k.barrier_cluster_arrive();
    k.barrier_cluster_wait();
  }
  if (c_.dependent_launch) {
    // Launched to overlap the stream's previous kernel (LaunchConfig::
    // overlap_previous), the prologue above ran beside its tail; global
    // memory only after that kernel completes. The next kernel may be
    // scheduled from here on: it too waits for this one before it touches
    // memory, and it takes only SMs this grid leaves.
    k.griddepcontrol_launch_dependents();
    k.griddepcontrol_wait();
  }
  source_ = d_->work_source(*this);
  if (cluster_size() > 1 && !source_->cluster_rank())
    throw TileError("kernel '" + k.name() +
                    "': a cluster launch over a work source without cluster ranks");
  if (c_.stream_k || c_.split_k) {
    const auto* scheduler = dynamic_cast<const TileScheduler*>(source_.get());
    if (!scheduler)
      throw TileError("kernel '" + k.name() +
                      "': split-K or stream-K over a work source that is no TileScheduler");
    if (c_.stream_k)
      stream_k_.emplace(k, *scheduler, workspace_, tid_, 128 * c_.consumers,
                        c_.stream_k->partial_bytes, *publish, *partial);
    else
      split_k_.emplace(k, *scheduler, workspace_, tid_, c_.consumers, c_.split_k->partial_bytes,
                       *split_barriers);
  }
  Reg wg = tid_ >> 7;
  auto others = [&] {
    if (c_.helpers == 0) return consumer();
    k.if_else(
        wg > c_.consumers,
        [&] {
          if (c_.helper_registers)
            k.setmaxnreg_dec(static_cast<std::uint32_t>(c_.helper_registers));
          d_->helper(*this);
        },
        [&] { consumer(); });
  };
  k.if_else(
      wg == c_.consumers, [&] { producer(); }, others);
  if (cluster_size() >
      1) {  // no CTA leaves while a peer may still multicast into it or arrive on it
    k.barrier_cluster_arrive();
    k.barrier_cluster_wait();
  }
  return k.module();
}

// The producer warpgroup: its registers given back, then the design's role
// (by default load_stages).
void WarpSpecialized::producer() {
  Kernel& k = *k_;
  if (c_.producer_registers) k.setmaxnreg_dec(static_cast<std::uint32_t>(c_.producer_registers));
  if (stream_k_) stream_k_->publish();
  d_->producer(*this);
}

// The producer warpgroup's first thread issues every load.
void WarpSpecialized::load_stages() {
  Kernel& k = *k_;
  k.if_then(tid_ == 128 * c_.consumers, [&] {
    PipelineState state(k, c_.stages);
    // A multicast goes to the CTAs that share the operand: those of this
    // CTA's cluster row (the same M tile), of its cluster column (N tile).
    row_mask_.reset();
    column_mask_.reset();
    if (cluster_size() > 1) {
      const ClusterRank rank = *source_->cluster_rank();
      if (c_.cluster_n > 1) {
        Reg bits = k.mov(u16, 0);
        for (int j = 0; j < c_.cluster_n; ++j)
          k.or_(bits, bits, k.mov(u16, 1) << (rank.m + j * c_.cluster_m));
        row_mask_ = bits;
      }
      if (c_.cluster_m > 1) {
        Reg bits = k.mov(u16, 0);
        for (int i = 0; i < c_.cluster_m; ++i)
          k.or_(bits, bits, k.mov(u16, 1) << (rank.n * c_.cluster_m + i));
        column_mask_ = bits;
      }
    }
    source_->for_each([&](const WorkItem& w) {
      d_->load_item(w);
      k.for_range(w.kb0, w.kb1, 1, [&](Reg kb) {
        Reg full = pipe_->full_barrier(state);
        pipe_->acquire(state);
        // The whole stage arrives here, this CTA's loads and its peers' multicasts.
        if (c_.stage_bytes) pipe_->expect_tx(full, c_.stage_bytes);
        d_->load({w, kb, state, full});
        ++state;
      });
    });
  });
}

void WarpSpecialized::consumer() {
  Kernel& k = *k_;
  if (c_.consumer_registers) k.setmaxnreg_inc(static_cast<std::uint32_t>(c_.consumer_registers));
  warpgroup_.reset();
  leader_.reset();
  d_->consumer_setup(*this);
  // Where the design did not ask for them, here: every later use is below
  // this point (a register first written inside a branch would not be).
  warpgroup();
  leader();
  PipelineState state(k, c_.stages);
  if (c_.schedule == ConsumerSchedule::cooperative)
    cooperative(state);
  else
    pingpong(state);
  d_->consumer_teardown(*this);
}

// The consumers share each item; a stream-K piece that ends inside its
// tile stores its sums, the piece that ends the tile adds the others' first.
void WarpSpecialized::cooperative(PipelineState& state) {
  Kernel& k = *k_;
  source_->for_each([&](const WorkItem& w) {
    if (split_k_) {
      d_->mainloop(*this, w, state);
      return split_k_->finish(d_->partial_sums(), w, warpgroup(), leader(), [&] { d_->finish(w); });
    }
    if (!w.partial) {
      d_->mainloop(*this, w, state);
      return d_->finish(w);
    }
    // Predicates, not the piece's registers, carried through the mainloop.
    Pred partial = *w.partial != 0, joins = w.kb0 != 0;
    d_->mainloop(*this, w, state);
    k.if_else(
        partial, [&] { stream_k_->store(d_->partial_sums()); },
        [&] {
          k.if_then(joins, [&] {
            const StreamKReduction::Staging staging{base_, c_.stream_k->staging,
                                                    c_.stream_k->staging_bytes, warpgroup()};
            stream_k_->add(d_->partial_sums(), w.tile.unit, staging,
                           [&] { d_->acquire_staging(*this); });
          });
          d_->finish(w);
        });
  });
}

// The producer fills the ring item after item; warpgroup 1's first
// k-block comes after warpgroup 0's first item. A full barrier's parity
// tells only its current phase from the one before (PTX ISA 9.7.13.15.16),
// so a warpgroup must not wait on a slot a whole ring ahead of the other's
// last wait: each mainloop starts only once the other warpgroup has passed
// the last full-barrier wait of the item before (named barriers, bar.arrive
// by the one, bar.sync by the other).
void WarpSpecialized::pingpong(PipelineState& state) {
  Kernel& k = *k_;
  const Reg& cw = warpgroup();
  Reg other = cw ^ 1;
  k.if_then(cw == 1, [&] { state.skip(source_->pingpong_skip(nullptr)); });
  Pred first = k.setp(Cmp::eq, cw, 0);  // warpgroup 0's first item has no item before it
  source_->for_each(
      [&](const WorkItem& w) {
        k.if_then(!first, [&] { order_->of(cw).sync(); });
        k.setp(first, Cmp::ne, cw, cw);  // false from here on
        Pred next = source_->has_successor(w);
        walk(w, state, [&] { k.if_then(next, [&] { order_->of(other).arrive(); }); });
        state.skip(source_->pingpong_skip(&w));
        d_->finish(w);
      },
      &cw, 2);
}

// The stage walk of one item: each k-block's slot waited for, computed on,
// and freed once the wgmma of the next k-block are issued and its own
// completed (its commit groups stay in flight so the tensor cores never
// wait on this warpgroup). `after_last_wait` runs (when given) once the last
// k-block's slot is full. (Ping-pong orders its warpgroups inside it: that
// schedule always walks with the template.)
void WarpSpecialized::walk(const WorkItem& w, PipelineState& state,
                           const std::function<void()>& after_last_wait) {
  Kernel& k = *k_;
  const Pred& lead = leader();
  Reg previous = k.mov(u32, 0);  // the slot of the k-block before this one
  // Counted from 0: the item's bounds need no registers in the loop.
  Reg count = w.kb1 - w.kb0;
  k.for_range(0, count, 1, [&](Reg kb) {
    pipe_->wait(state);
    if (after_last_wait) k.if_then(kb == count - 1, after_last_wait);
    const ComputeStep step(w, kb, state);
    k.wgmma_wait_group(d_->compute(step));
    k.if_then(lead && step.accumulate(), [&] { pipe_->release(previous, cluster_size()); });
    k.mov(previous, state.stage());
    ++state;
  });
  k.wgmma_wait_group(0);
  k.if_then(lead, [&] { pipe_->release(previous, cluster_size()); });
}

}  // namespace warpforge::tile
