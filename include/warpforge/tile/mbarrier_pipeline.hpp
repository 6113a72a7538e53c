// The multi-stage mbarrier pipeline of Hopper kernels: a ring of `stages`
// slots in shared memory, each with a full barrier (the producer's loads
// have landed: TMA's transaction bytes, or producer arrivals) and an empty
// barrier (every consumer has finished reading the slot). Producer and
// consumers each walk the ring with a PipelineState {stage, phase}; a waiter
// tests the parity of the phase it waits for (PTX ISA 9.7.13.15.16,
// mbarrier.try_wait.parity), and the parity flips each time the walk wraps.
//
//   MbarrierPipeline pipe(MbarrierArray(k, base, full, S), MbarrierArray(k, base, empty, S));
//   pipe.init(1, consumers);              // one thread, once, before the first use
//   PipelineState s(k, S);
//   // producer, per k-block:             // consumer, per k-block:
//   Reg full = pipe.full_barrier(s);      pipe.wait(s);
//   pipe.acquire(s);                      ... read slot s.stage() ...
//   pipe.expect_tx(full, bytes);          pipe.release(s.stage());
//   ... TMA loads signalling `full` ...   ++s;
//   ++s;
//
// A slot starts empty: the producer's first wait, for the parity before
// the first phase, succeeds at once (PTX ISA 9.7.13.15.16).
#pragma once

#include <cstdint>

#include "warpforge/dsl/kernel.hpp"
#include "warpforge/tile/mbarrier_array.hpp"

namespace warpforge::tile {

// Where one role is in the ring: the slot (u32 register, 0..stages-1) and
// the parity (u32 register, 0 or 1) of the phase it waits for there.
class PipelineState {
 public:
  // Stage 0, phase 0 (two mov). Throws TileError unless stages >= 1.
  PipelineState(dsl::Kernel& k, int stages);

  const dsl::Reg& stage() const { return stage_; }
  const dsl::Reg& phase() const { return phase_; }
  int stages() const { return stages_; }

  // The next slot, flipping the phase when the ring wraps (five instructions:
  // add, setp, two selp, xor).
  PipelineState& operator++();
  // `steps` slots on (any count, e.g. a tile's k-blocks that another
  // consumer takes): the phase flips once per wrap (div, rem, xor).
  void skip(const dsl::Src& steps);

 private:
  dsl::Kernel* k_;
  int stages_;
  dsl::Reg stage_, phase_;
};

class MbarrierPipeline {
 public:
  // Throws TileError unless both arrays have the same number of stages.
  MbarrierPipeline(MbarrierArray full, MbarrierArray empty);

  int stages() const { return full_.size(); }
  const MbarrierArray& full() const { return full_; }
  const MbarrierArray& empty() const { return empty_; }

  // Initialises every stage's full and empty barrier (stage by stage):
  // `full_arrivals` arrivals complete a full phase (1: the producer's
  // arrive.expect_tx), `empty_arrivals` an empty one (every consumer that
  // releases a slot, in every CTA whose producer writes into it).
  void init(const dsl::Src& full_arrivals, const dsl::Src& empty_arrivals) const;

  // Producer: the full barrier of the state's slot, the one its loads signal.
  dsl::Reg full_barrier(const PipelineState& s) const { return full_.address(s.stage()); }
  // Producer: waits until the state's slot is empty.
  void acquire(const PipelineState& s) const;
  // Producer: arrives on a full barrier and expects `bytes` of transactions
  // (TMA's complete_tx) before its phase completes.
  void expect_tx(const dsl::Reg& full_barrier, const dsl::Src& bytes) const;
  // Producer: arrives on the full barrier of `stage` (data written by threads).
  void commit(const dsl::Reg& stage) const;

  // Consumer: waits until the state's slot is full.
  void wait(const PipelineState& s) const;
  // Consumer: frees slot `stage` (one arrival on its empty barrier). With
  // cluster_size > 1 the arrival goes to the slot's empty barrier in every
  // CTA of the cluster (mapa + mbarrier.arrive.shared::cluster), whose
  // producers multicast into this CTA's slot. The arrival releases at CTA
  // scope: a consumer's reads of the slot need no cluster-wide ordering
  // (wgmma.wait_group completed them), and .release.cluster ran a whole
  // GEMM at 0.59x the speed on an H200 (docs/PERFORMANCE.md).
  void release(const dsl::Reg& stage, int cluster_size = 1) const;

 private:
  MbarrierArray full_, empty_;
};

}  // namespace warpforge::tile
