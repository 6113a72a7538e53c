// A named barrier of the CTA (PTX ISA 9.7.13.1, bar / barrier): 16 of them,
// id 0 being the one bar.sync with no id uses. A handle holds the id (an
// immediate, or a register where each warpgroup has its own) and how many
// threads meet there, so that the kernel's code says which barrier, not
// which numbers:
//
//   const NamedBarrier epilogue(k, warpgroup + 1, 128);
//   epilogue.sync();    // bar.sync id, 128
//   handover.arrive();  // bar.arrive id, 256: counted, does not wait
//
// Kernels do not pick ids: the warp-specialized template hands out
// barriers (warp_specialized.hpp), and a NamedBarrierSet is one barrier per
// warpgroup on consecutive ids, `of(warpgroup)` the one of a warpgroup
// whose index is in a register.
#pragma once

#include "warpforge/dsl/kernel.hpp"

namespace warpforge::tile {

class NamedBarrier {
 public:
  // Throws TileError unless an immediate id is in 0..15 and `threads` is a
  // multiple of the warp size in 32..1024 (PTX ISA 9.7.13.1: the count must
  // be a multiple of the warp size; a CTA has at most 1024 threads).
  NamedBarrier(dsl::Kernel& k, const dsl::Src& id, int threads);

  // bar.sync: waits until `threads` threads have arrived (this one included).
  void sync() const;
  // barrier.sync (not .aligned): the same where a warp's threads may reach
  // it apart (divergent paths before it; PTX ISA 9.7.13.1).
  void sync_unaligned() const;
  // bar.arrive: counts this thread's warp in without waiting (a producer's side).
  void arrive() const;

  const dsl::Src& id() const { return id_; }
  int threads() const { return threads_; }

 private:
  dsl::Kernel* k_;
  dsl::Src id_;
  int threads_;
};

class NamedBarrierSet {
 public:
  // Barriers first .. first + count - 1 of `threads` threads each. Throws
  // TileError unless they are ids 1..15 (0 is the CTA's) and `threads` is
  // as NamedBarrier takes it.
  NamedBarrierSet(dsl::Kernel& k, int first, int count, int threads);
  // The barrier of member `index` (a register < count): id first + index
  // (one add, emitted at each call).
  NamedBarrier of(const dsl::Reg& index) const;
  int first() const { return first_; }
  int count() const { return count_; }

 private:
  dsl::Kernel* k_;
  int first_, count_, threads_;
};

}  // namespace warpforge::tile
