// The persistent schedule of the grouped kernels: a tile-level work source
// that walks the groups' tiles from the offsets in device memory, nothing
// read back to the host.
//
// Every CTA builds the same table in its shared memory at entry: warp 0
// reads the G offsets (each lane a run of them), takes their running
// maximum clamped to [0, extent] (a warp max-scan: a wrong offset can never
// take a tile outside the tensors), and from each group's extent its count
// of work units, whose exclusive prefix sum (a warp add-scan) numbers the
// units of all groups one after another. Then, like tile::TileScheduler,
// CTA c takes work items c, c + #CTAs, ...; item i is split i % splits of
// unit i / splits (a unit's K splits run on neighbouring CTAs), and a
// binary search of the prefix sums (log2 G shared loads) finds the unit's
// group. Empty groups own no units, so they cost nothing but their entry
// in the table.
//
// Units of a group:
//  - ragged rows (ragged M): ceil(rows / rows_per_tile) row tiles x
//    units_per_row (the N tiles). A pseudo-group G after the last spans the
//    rows past the last end (to the extent), whose tiles a kernel writes as
//    zeros (no K range).
//  - fixed (ragged K): units_per_row units each, empty groups too (their
//    output is zeros, and must be written).
//
//   GroupSchedule schedule(k, options, offsets_pointer, extent, tid, table);
//   schedule.for_each([&](const GroupWork& w) { ... });
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "grouped_gemm_problem.hpp"
#include "warpforge/dsl.hpp"

namespace warpforge::ops {

struct GroupScheduleOptions {
  std::int64_t groups = 1;
  bool ragged_rows = true;
  int rows_per_tile = 1;             // ragged rows: rows of a group a unit row covers
  std::int64_t units_per_row = 1;    // ragged rows: units a row tile; fixed: units a group
  int splits = 1;                    // work items a unit (K splits)
  // Ragged rows: the order of a group's units. 1: row-major (each row tile's
  // N tiles in turn). B > 1: tile::grouped_raster's order inside the group,
  // bands of B row tiles walked N-major, so the CTAs running at once share a
  // few of the group's B panels (L2 reuse at prefill, where row-major walks
  // all of B for every row tile).
  int band_rows = 1;
  // Ragged rows: whether the pseudo-group's units (rows past the last end)
  // are work items; without them the kernel zeroes those rows itself
  // (rows_past_end).
  bool tail_units = true;
  // Entries of the table: the groups, and the pseudo-group of ragged rows.
  std::int64_t entries() const { return groups + (ragged_rows ? 1 : 0); }
  // Shared bytes of the table: starts and ends of every entry, and the
  // prefix sums of their units (one more: the total).
  std::int64_t table_bytes() const { return 4 * (3 * entries() + 1); }
};

// The ragged-M schedule of a design whose unit is `tokens` rows of a group
// (A's, the tokens) by `weight_rows` of N (the RS and stream kernels of
// packed weights), each unit `splits` work items (K split), the rows past
// the last group's end units too (tail_units); row-major within a group.
GroupScheduleOptions ragged_rows_schedule(const GroupedGemmProblem& p, int weight_rows, int tokens, int splits);

// One work item: the unit's group (`groups` for the pseudo-group) with its
// extent [begin, end) (rows for ragged rows, K for fixed), the unit's row
// tile in the group and column, its global number and the item's split.
struct GroupWork {
  dsl::Reg group, begin, end, row_tile, col, unit, split;
};

class GroupSchedule {
 public:
  // Emits the table's construction (every thread of the CTA must run it:
  // it ends with bar.sync 0). offsets: u64 global address of G int32;
  // extent: M or K (u32 register, < 2^31); tid: the thread's index;
  // table: a 4-byte aligned shared address of options.table_bytes().
  GroupSchedule(dsl::Kernel& k, const GroupScheduleOptions& options, const dsl::Reg& offsets,
                const dsl::Reg& extent, const dsl::Reg& tid, const dsl::Reg& table);

  const dsl::Reg& units() const { return units_; }  // of every group (u32)
  // Ragged rows: the first row past the last group (u32, read from the table).
  dsl::Reg rows_end() const;
  // Runs `body` for this CTA's work items, in order.
  void for_each(const std::function<void(const GroupWork&)>& body) const;

 private:
  dsl::Kernel* k_;
  GroupScheduleOptions o_;
  dsl::Reg extent_, table_, units_;
  dsl::Reg starts() const;
  dsl::Reg ends() const;
  dsl::Reg prefix() const;
};

// What a grid needs to know on the host: at most this many units, whatever
// the offsets (ragged rows: every group adds at most one partial row tile).
std::int64_t max_group_units(const GroupScheduleOptions& options, std::int64_t extent);

// The host's copy of the schedule, for tests: every unit in order, as
// (group, begin, end, row tile, column).
struct HostGroupUnit {
  std::int64_t group, begin, end, row_tile, col;
  friend bool operator==(const HostGroupUnit&, const HostGroupUnit&) = default;
};
std::vector<HostGroupUnit> host_group_units(const GroupScheduleOptions& options, std::span<const std::int32_t> offsets,
                                            std::int64_t extent);

}  // namespace warpforge::ops
