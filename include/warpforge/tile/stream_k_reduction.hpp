// Stream-K's partial sums (TileScheduler with stream_k): a CTA whose run
// ends inside a tile stores its sums into a workspace and raises a flag;
// the CTA that finishes the tile adds the sums of the CTAs before it whose
// runs end inside the tile, nearest first: a fixed order, so every run
// gives the same bits. The warp-specialized template (warp_specialized.hpp)
// runs it; a design supplies the accumulators and a staging buffer.
//
// The workspace: one slot of partial sums per CTA (`partial_bytes`), then
// one u32 flag per CTA (nonzero while a sum waits). A thread's registers
// 4j..4j+3 sit at (j · threads + thread) · 16 bytes of its CTA's slot, so
// that each vector store or load of a warp covers 512 contiguous bytes. The
// flags must be zero before the first launch; every launch leaves them so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "warpforge/dsl/kernel.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/tile_scheduler.hpp"

namespace warpforge::tile {

// The workspace for a grid of `ctas`, each leaving `partial_bytes` of sums.
inline std::size_t stream_k_workspace_bytes(std::size_t partial_bytes, std::uint32_t ctas) {
  return std::size_t{ctas} * (partial_bytes + 4);
}

class StreamKReduction {
 public:
  // `threads` consumer threads (thread t = %tid.x below it) hold the sums;
  // `publish` counts them and one warp of another role (threads + 32),
  // `partial` the consumers alone.
  StreamKReduction(dsl::Kernel& k, const TileScheduler& scheduler, const dsl::Reg& workspace,
                   const dsl::Reg& tid, int threads, std::uint32_t partial_bytes,
                   NamedBarrier publish, NamedBarrier partial);

  // The consumers: store this CTA's sums (its one partial piece) and
  // arrive; they do not wait for it to be published.
  void store(const dsl::Regs& acc) const;
  // The second warp of another warpgroup (idle otherwise): once the
  // consumers' stores are done (bar.sync after their bar.arrive orders them
  // before it, PTX ISA 9.7.13.1), raises the CTA's flag behind a gpu-scope
  // fence: the release pattern of the memory model (PTX ISA 8.9.3) that
  // add's acquire pairs with. A CTA has one partial piece at most.
  void publish() const;
  // The consumers of the CTA that finishes `unit`: add to `acc` the sums
  // of the CTAs before it whose runs end inside the unit. One thread waits
  // for each flag and clears it for the next launch; the named barrier
  // passes its acquire on to the others. The sums come through the
  // warpgroup's staging buffer by cp.async, each thread staging its own:
  // loaded straight into registers they would arrive one at a time, the
  // accumulators leaving no registers to have more loads in flight.
  // `acquire_staging` runs first: the buffer's last use is over once it returns.
  struct Staging {
    dsl::Reg base;         // the shared-memory base (u32)
    std::uint32_t offset;  // warpgroup 0's buffer, from the base
    std::uint32_t bytes;   // per warpgroup: 128 threads' share, a multiple of 16 each
    dsl::Reg warpgroup;    // this thread's (u32)
  };
  void add(const dsl::Regs& acc, const dsl::Reg& unit, const Staging& staging,
           const std::function<void()>& acquire_staging) const;

 private:
  dsl::Reg slot(const dsl::Reg& cta) const;
  dsl::Reg flag(const dsl::Reg& cta) const;

  dsl::Kernel* k_;
  const TileScheduler* sched_;
  dsl::Reg workspace_, tid_;
  int threads_;
  std::uint32_t partial_bytes_;
  NamedBarrier publish_, partial_;
};

}  // namespace warpforge::tile
