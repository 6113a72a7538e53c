// Split-K's partial sums (TileScheduler with splits > 1), in a fixed order:
// every split but the first stores each consumer warpgroup's sums into a
// workspace slot and raises the slot's flag behind a gpu-scope fence (the
// memory model's release pattern, PTX ISA 8.9.3); the first split waits for
// each flag in split order (one thread spins, clears the flag for the next
// launch and fences: the acquire; the warpgroup's named barrier passes it
// on), adds the sums in that order, so every run gives the same bits, and
// finishes the tile. The first split waits for the others: all of a tile's
// splits must be resident at once (its splits are neighbouring items; a
// grid of at most one CTA per SM and no more items than CTAs ensures it).
// The warp-specialized template (warp_specialized.hpp) runs it.
//
// The workspace: a slot of `partial_bytes` per (unit, split after the
// first, consumer warpgroup), then a u32 flag per slot. A thread's
// registers 4j..4j+3 sit at (128j + thread) · 16 bytes of its warpgroup's
// slot (coalesced). The flags must be zero before the first launch; every
// launch leaves them so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "warpforge/dsl/kernel.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/tile_scheduler.hpp"

namespace warpforge::tile {

// The workspace of `units` output tiles in `splits` k-ranges, `warpgroups`
// consumer warpgroups each leaving `partial_bytes` of sums.
inline std::size_t split_k_workspace_bytes(std::size_t units, int splits, int warpgroups,
                                           std::size_t partial_bytes) {
  return units * static_cast<std::size_t>(splits - 1) * static_cast<std::size_t>(warpgroups) *
         (partial_bytes + 4);
}

class SplitKReduction {
 public:
  // `barriers`: one per consumer warpgroup (128 threads each).
  SplitKReduction(dsl::Kernel& k, const TileScheduler& scheduler, const dsl::Reg& workspace,
                  const dsl::Reg& tid, int warpgroups, std::uint32_t partial_bytes,
                  NamedBarrierSet barriers);

  // Item `w` (a split of its tile) of warpgroup `cw` whose first thread is
  // `leader`, its sums in `acc`: a later split stores and publishes them;
  // the first adds the others' and runs `finish` (the epilogue).
  void finish(const dsl::Regs& acc, const WorkItem& w, const dsl::Reg& cw, const dsl::Pred& leader,
              const std::function<void()>& finish) const;

 private:
  dsl::Reg index(const WorkItem& w, const dsl::Reg& split, const dsl::Reg& cw) const;
  dsl::Reg slot(const WorkItem& w, const dsl::Reg& split, const dsl::Reg& cw) const;
  dsl::Reg flag(const WorkItem& w, const dsl::Reg& split, const dsl::Reg& cw) const;

  dsl::Kernel* k_;
  const TileScheduler* sched_;
  dsl::Reg workspace_, tid_;
  int warpgroups_;
  std::uint32_t partial_bytes_;
  NamedBarrierSet barriers_;
};

}  // namespace warpforge::tile
