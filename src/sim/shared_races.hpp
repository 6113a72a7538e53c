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
// waiting warp), TMA loads' writes (by the issuing warp, when issued), TMA
// stores' reads (when their group retires) and wgmma.mma_async's reads of A
// and B through its descriptors (below). Not: the lanes of one warp against
// each other (they run in lockstep here), atomics, the mbarrier objects, a
// cp.async issued before a wgmma retires but waited for after, and other
// CTAs of a cluster (a launch with clusters is not checked). An mbarrier's
// clock accumulates over its phases, which can only hide a race, never
// invent one.
//
// A wgmma reads shared memory asynchronously from its issue until the
// wgmma.wait_group that retires it (PTX ISA 9.7.15.5, 9.7.15.7.3). Each
// warp's part reads its 16 rows of A (when A is in shared memory) and all
// of B, the bytes its accumulators depend on. When it retires, every write
// of those bytes must be ordered before that warp's issue: the issue keeps
// the warp's clock and starts its next epoch, so a write by the warp
// itself after the issue shows too. The reads then count as the
// warpgroup's: one more clock component per warpgroup (its "tensor core"),
// whose epoch each retirement advances and every warp of the group
// acquires, so a later write is ordered after them once it is ordered after
// any one warp's wait_group. A wgmma is one operation of the warpgroup, and
// kernels let a single thread release a stage after the wait (CUTLASS's
// consumer_release); per-warp reads would call that a race.
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
  // A component per warp, then one per warpgroup (its wgmma reads).
  using Clock = std::array<std::uint32_t, kMaxWarps + kMaxWarps / 4>;

  // A race found: the earlier access's warp (or, from the number of warps
  // on, warpgroup: a wgmma's read), instruction and whether it was a write;
  // the byte.
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
  // conversions of replicated data do, leave the same bytes in any order),
  // and a read ordered after it sees that value whichever write landed
  // last; a write of another value is ordered after both.
  Race access(std::uint32_t warp, std::uint32_t pc, const std::byte* memory, std::size_t offset, std::size_t size,
              bool write, const std::byte* data);

  // wgmma.mma_async's reads (above). Issue: the warp's clock now, kept by
  // the wgmma; starts the warp's next epoch.
  Clock issue_async_read(std::uint32_t warp);
  // Retirement by warpgroup `group`'s wgmma.wait_group: begin_retirement
  // once, with the join of the retired wgmmas' issue clocks in all four
  // warps; then for each warp each retired read of [offset, offset + size)
  // by the wgmma at `pc` issued at clock `issued` (a race: the last write
  // of a byte, not ordered before the issue), then retired() for the warp,
  // which acquires the reads and that join (a wgmma, one operation of the
  // warpgroup taking every warp's registers, completes after all four
  // issued it).
  void begin_retirement(std::uint32_t group, const Clock& issues);
  Race async_read(std::uint32_t group, std::uint32_t pc, const Clock& issued, std::size_t offset,
                  std::size_t size);
  void retired(std::uint32_t warp, std::uint32_t group);

  std::uint32_t warps() const { return warps_; }

  // Synchronization through `object` (a barrier, an mbarrier): release joins
  // the warp's clock into the object's and starts the warp's next epoch;
  // acquire joins the object's into the warp's; forget starts the object anew.
  void release(std::uint32_t warp, const void* object);
  void acquire(std::uint32_t warp, const void* object);
  void forget(const void* object);

 private:
  static constexpr std::uint8_t kNone = 0xFF;
  static bool ordered(std::uint8_t writer, std::uint32_t clock, const Clock& c, std::uint8_t self);
  std::uint32_t warps_ = 0;
  std::uint32_t components_ = 0;  // warps, then warpgroups
  std::size_t bytes_ = 0;
  std::vector<Clock> clocks_;                         // per warp
  std::vector<std::uint32_t> group_epoch_;            // per warpgroup: its wgmma reads' epoch
  std::vector<Clock> group_issues_;                   // per warpgroup: begin_retirement's join
  std::unordered_map<const void*, Clock> objects_;    // per synchronization object
  std::vector<std::uint8_t> writer_;                  // per byte: the last write's warp, or kNone
  std::vector<std::uint32_t> write_clock_, write_pc_;
  // per byte: a write of the value the last write left, by a warp not
  // ordered after that write (kNone: none since it); an access ordered
  // after either write sees that value.
  std::vector<std::uint8_t> also_writer_;
  std::vector<std::uint32_t> also_clock_, also_pc_;
  std::vector<std::uint32_t> read_clock_;             // [offset * components + c]; 0: no read since the write
  std::vector<std::uint32_t> read_pc_;                // per byte: the last read's instruction
  std::vector<std::uint32_t> wgmma_read_pc_;          // per byte: the last wgmma's that read it
};

}  // namespace warpforge::sim
