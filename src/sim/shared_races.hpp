// Races on a CTA's shared memory that the simulator can see: two accesses of
// one byte by different warps, at least one a write, that no synchronization
// orders. Order comes from the warps' vector clocks (one component per warp
// of the CTA), joined where the PTX synchronizes: a bar.sync/bar.arrive's
// arrivals are acquired by the warps the barrier releases (PTX ISA 9.7.13.1),
// an mbarrier's arrivals (arrive, cp.async.mbarrier.arrive, a TMA load's
// complete_tx) by a wait that finds the phase complete (9.7.13.15). Each
// byte keeps its last write (warp, clock, instruction) and each warp's last
// read since; an access checks them against the accessing warp's clock
// (FastTrack's epochs: Flanagan and Freund, PLDI 2009, at warp granularity).
//
// What it sees: loads and stores, ldmatrix/stmatrix and wmma of the CTA's
// own shared memory, cp.async's writes (when a wait retires them, by the
// waiting warp), TMA loads' writes (by the issuing warp, when issued) and
// TMA stores' reads (when their group retires). Not: the lanes of one warp
// against each other (they run in lockstep here), atomics, the mbarrier
// objects, wgmma's reads through descriptors, and other CTAs of a cluster
// (a launch with clusters is not checked). An mbarrier's clock accumulates
// over its phases, which can only hide a race, never invent one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace warpforge::sim {

class SharedRaces {
 public:
  static constexpr std::uint32_t kMaxWarps = 32;
  using Clock = std::array<std::uint32_t, kMaxWarps>;

  // A race found: the earlier access's warp, instruction and whether it was
  // a write; the byte.
  struct Race {
    bool found = false;
    bool earlier_write = false;
    std::uint32_t warp = 0;
    std::uint32_t pc = 0;
    std::size_t offset = 0;
  };

  // Starts a CTA of `warps` warps and `bytes` of shared memory.
  void reset(std::uint32_t warps, std::size_t bytes);

  // Warp `warp`, at instruction `pc`, reads or writes [offset, offset + size)
  // of `memory` (the shared memory, before a write); a write's new bytes are
  // `data` where known: a byte written with the value it holds races with
  // nothing (warps that store the same values, as Triton's layout
  // conversions of replicated data do, leave the same bytes in any order).
  Race access(std::uint32_t warp, std::uint32_t pc, const std::byte* memory, std::size_t offset, std::size_t size,
              bool write, const std::byte* data);

  // Synchronization through `object` (a barrier, an mbarrier): release joins
  // the warp's clock into the object's and starts the warp's next epoch;
  // acquire joins the object's into the warp's; forget starts the object anew.
  void release(std::uint32_t warp, const void* object);
  void acquire(std::uint32_t warp, const void* object);
  void forget(const void* object);

 private:
  static constexpr std::uint8_t kNone = 0xFF;
  std::uint32_t warps_ = 0;
  std::size_t bytes_ = 0;
  std::vector<Clock> clocks_;                         // per warp
  std::unordered_map<const void*, Clock> objects_;    // per synchronization object
  std::vector<std::uint8_t> writer_;                  // per byte: the last write's warp, or kNone
  std::vector<std::uint32_t> write_clock_, write_pc_;
  std::vector<std::uint32_t> read_clock_;             // [offset * warps + warp]; 0: no read since the write
  std::vector<std::uint32_t> read_pc_;                // per byte: the last read's instruction
};

}  // namespace warpforge::sim
