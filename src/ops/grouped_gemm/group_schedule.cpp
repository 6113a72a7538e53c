#include "group_schedule.hpp"

#include <algorithm>

#include "warpforge/error.hpp"
#include "warpforge/ops/grouped_gemm_reference.hpp"
#include "warpforge/tile/tile_scheduler.hpp"

namespace warpforge::ops {

using namespace dsl;

namespace {

// Units of a group of `rows` rows (ragged rows) or of any group (fixed).
std::int64_t host_units(const GroupScheduleOptions& o, std::int64_t rows) {
  if (!o.ragged_rows) return o.units_per_row;
  return (rows + o.rows_per_tile - 1) / o.rows_per_tile * o.units_per_row;
}

}  // namespace

GroupScheduleOptions ragged_rows_schedule(const GroupedGemmProblem& p, int weight_rows, int tokens, int splits) {
  GroupScheduleOptions o;
  o.groups = p.groups;
  o.ragged_rows = true;
  o.rows_per_tile = tokens;
  o.units_per_row = (p.n + weight_rows - 1) / weight_rows;
  o.splits = splits;
  o.tail_units = true;
  return o;
}

Reg GroupSchedule::starts() const { return table_; }
Reg GroupSchedule::ends() const { return table_ + imm(4 * o_.entries()); }
Reg GroupSchedule::prefix() const { return table_ + imm(8 * o_.entries()); }

GroupSchedule::GroupSchedule(Kernel& k, const GroupScheduleOptions& o, const Reg& offsets, const Reg& extent,
                             const Reg& tid, const Reg& table)
    : k_(&k), o_(o), extent_(extent), table_(table) {
  if (o.groups < 1 || o.rows_per_tile < 1 || o.units_per_row < 1 || o.splits < 1)
    throw OpsError("group schedule: groups " + std::to_string(o.groups) + ", rows per tile " +
                   std::to_string(o.rows_per_tile) + ", units per row " + std::to_string(o.units_per_row) +
                   ", splits " + std::to_string(o.splits) + "; each must be at least 1");
  const std::int64_t groups = o.groups;
  const int per_lane = static_cast<int>((groups + 31) / 32);
  const Reg starts_at = starts(), ends_at = ends(), prefix_at = prefix();
  Reg limit = extent.as(s32);
  k.if_then(tid < 32u, [&] {
    const Reg& lane = tid;
    Reg first = lane * imm(per_lane);
    // The lane's offsets, all loads first (independent), then their running
    // maximum from 0 (a negative offset counts as 0).
    std::vector<Reg> group, raw;
    std::vector<Pred> inside;
    for (int j = 0; j < per_lane; ++j) {
      group.push_back(first + imm(j));
      inside.push_back(group.back() < imm(groups));
      raw.push_back(k.mov(s32, 0));
      Reg offset = k.reg(u64);
      k.mul_wide(offset, group.back(), 4u);
      Reg address = offsets + offset;
      k.guarded(inside.back(), [&] { k.ld(Space::global, s32, raw.back(), at(address), {.nc = true}); });
    }
    std::vector<Reg> running;
    for (int j = 0; j < per_lane; ++j) running.push_back(k.max(j ? running.back() : Reg(k.mov(s32, 0)), raw[j]));
    // The lanes' maxima scanned (inclusive): shfl.up leaves a lane below
    // the distance its own value, which max ignores (PTX ISA 9.7.8.6).
    Reg scan_max = running.back();
    for (int d = 1; d < 32; d *= 2) {
      Reg from = k.reg(s32);
      k.shfl_sync(Shfl::up, from, scan_max, d, 0);
      scan_max = k.max(scan_max, from);
    }
    Reg before = k.reg(s32);
    k.shfl_sync(Shfl::up, before, scan_max, 1, 0);
    k.selp(before, 0, before, lane == 0u);
    // Each group's clamped start and end, and its units.
    Reg start = k.min(before, limit);
    std::vector<Reg> units;
    for (int j = 0; j < per_lane; ++j) {
      Reg end = k.min(k.max(before, running[j]), limit);
      Reg at4 = group[j] << 2u;
      k.guarded(inside[j], [&] {
        k.st(Space::shared, u32, at(starts_at + at4), start);
        k.st(Space::shared, u32, at(ends_at + at4), end);
      });
      Reg rows = end - start;
      Reg count = o.ragged_rows ? Reg(k.div(rows.as(u32) + imm(o.rows_per_tile - 1), imm(o.rows_per_tile)) *
                                      imm(o.units_per_row))
                                : k.mov(u32, imm(o.units_per_row));
      units.push_back(k.selp(count, 0u, inside[j]));
      start = end;
    }
    // Exclusive prefix sums of the units: within the lane, then across the
    // lanes (inclusive add-scan; a lane below the distance adds nothing).
    Reg lane_sum = k.mov(u32, 0u);
    std::vector<Reg> within;
    for (int j = 0; j < per_lane; ++j) {
      within.push_back(lane_sum);
      lane_sum = lane_sum + units[j];
    }
    Reg scan_sum = lane_sum;
    for (int d = 1; d < 32; d *= 2) {
      Reg from = k.reg(u32);
      k.shfl_sync(Shfl::up, from, scan_sum, d, 0);
      scan_sum = scan_sum + k.selp(from, 0u, lane >= imm(d));
    }
    Reg lane_base = scan_sum - lane_sum;
    for (int j = 0; j < per_lane; ++j)
      k.guarded(inside[j], [&] { k.st(Space::shared, u32, at(prefix_at + (group[j] << 2u)), lane_base + within[j]); });
    // Lane 31 holds every group's total and the last end: the pseudo-group
    // (rows past the last end) and the total of all units.
    k.if_then(lane == 31u, [&] {
      Reg total = scan_sum;
      if (o.ragged_rows) {
        Reg last = k.min(scan_max, limit);
        k.st(Space::shared, u32, at(starts_at, 4 * groups), last);
        k.st(Space::shared, u32, at(ends_at, 4 * groups), extent);
        k.st(Space::shared, u32, at(prefix_at, 4 * groups), total);
        if (o.tail_units) {
          Reg rows = extent - last.as(u32);
          total = total + k.div(rows + imm(o.rows_per_tile - 1), imm(o.rows_per_tile)) * imm(o.units_per_row);
        }
      }
      k.st(Space::shared, u32, at(prefix_at, 4 * o.entries()), total);
    });
  });
  k.bar_sync();
  units_ = k.reg(u32);
  k.ld(Space::shared, u32, units_, at(prefix_at, 4 * o.entries()));
}

Reg GroupSchedule::rows_end() const {
  Reg end = k_->reg(u32);
  k_->ld(Space::shared, u32, end, at(starts(), 4 * o_.groups));  // the pseudo-group starts there
  return end;
}

void GroupSchedule::for_each(const std::function<void(const GroupWork&)>& body) const {
  Kernel& k = *k_;
  Reg item = k.mov(u32, SReg::ctaid_x);
  Reg items = units_ * imm(o_.splits);
  Reg step = k.sreg(SReg::nctaid_x);
  const Reg starts_at = starts(), ends_at = ends(), prefix_at = prefix();
  k.while_loop([&] { return item < items; },
               [&] {
                 Reg unit = o_.splits == 1 ? item : k.div(item, imm(o_.splits));
                 Reg split = o_.splits == 1 ? k.mov(u32, 0u) : Reg(item - unit * imm(o_.splits));
                 // The last entry whose first unit is at most `unit` (entries
                 // of no units share their successor's first unit, so it owns
                 // the unit): a binary search over the prefix sums.
                 Reg lo = k.mov(u32, 0u);
                 for (std::int64_t len = o_.entries(); len > 1;) {
                   const std::int64_t half = len / 2;
                   Reg probe = lo + imm(half);
                   Reg first = k.reg(u32);
                   k.ld(Space::shared, u32, first, at(prefix_at + (probe << 2u)));
                   k.selp(lo, probe, lo, first <= unit);
                   len -= half;
                 }
                 Reg at4 = lo << 2u;
                 GroupWork w{lo, k.reg(u32), k.reg(u32), {}, {}, unit, split};
                 Reg base = k.reg(u32);
                 k.ld(Space::shared, u32, w.begin, at(starts_at + at4));
                 k.ld(Space::shared, u32, w.end, at(ends_at + at4));
                 k.ld(Space::shared, u32, base, at(prefix_at + at4));
                 Reg local = unit - base;
                 if (o_.ragged_rows && o_.band_rows > 1) {
                   Reg row_tiles = k.div(w.end - w.begin + imm(o_.rows_per_tile - 1), imm(o_.rows_per_tile));
                   const tile::UnitCoords c = tile::grouped_raster(
                       k, local,
                       {.units_m = row_tiles,
                        .per_batch = row_tiles * imm(o_.units_per_row),
                        .group_span = imm(o_.units_per_row * o_.band_rows)},
                       o_.band_rows);
                   w.row_tile = c.m;
                   w.col = c.n;
                 } else if (o_.ragged_rows) {
                   w.row_tile = k.div(local, imm(o_.units_per_row));
                   w.col = local - w.row_tile * imm(o_.units_per_row);
                 } else {
                   w.row_tile = k.mov(u32, 0u);
                   w.col = local;
                 }
                 body(w);
                 k.add(item, item, step);
               });
}

std::int64_t max_group_units(const GroupScheduleOptions& o, std::int64_t extent) {
  if (!o.ragged_rows) return o.groups * o.units_per_row;
  // Whole row tiles of all rows, plus one partial one for each group that
  // has rows (at most min(G, extent) of them) and for the pseudo-group.
  return (extent / o.rows_per_tile + std::min(o.groups, extent) + (o.tail_units ? 1 : 0)) * o.units_per_row;
}

std::vector<HostGroupUnit> host_group_units(const GroupScheduleOptions& o, std::span<const std::int32_t> offsets,
                                            std::int64_t extent) {
  std::vector<std::int64_t> ends = clamped_group_ends(offsets, extent);
  std::vector<HostGroupUnit> units;
  std::int64_t begin = 0;
  auto add = [&](std::int64_t g, std::int64_t end) {
    const std::int64_t count = host_units(o, end - begin);
    const std::int64_t row_tiles = count / o.units_per_row, span = o.units_per_row * o.band_rows;
    for (std::int64_t u = 0; u < count; ++u) {
      if (!o.ragged_rows) {
        units.push_back(HostGroupUnit{g, begin, end, 0, u});
        continue;
      }
      // tile::grouped_raster's order (row-major when band_rows is 1).
      const std::int64_t first = u / span * o.band_rows, rows = std::min<std::int64_t>(row_tiles - first, o.band_rows);
      const std::int64_t within = u % span;
      units.push_back(HostGroupUnit{g, begin, end, first + within % rows, within / rows});
    }
    begin = end;
  };
  for (std::size_t g = 0; g < ends.size(); ++g) add(static_cast<std::int64_t>(g), ends[g]);
  if (o.ragged_rows && o.tail_units) add(o.groups, extent);
  return units;
}

}  // namespace warpforge::ops
