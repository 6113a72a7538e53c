// The persistent tile scheduler of Hopper GEMMs (a WorkSource,
// work_source.hpp): a grid of CTAs (or of
// clusters) walks a linear sequence of work units, CTA c taking units c,
// c + #CTAs, ...; each unit is one output tile per CTA of a cluster (rank r
// of a cluster_m x cluster_n cluster takes tile (r % cluster_m, r / cluster_m)
// of it) and, with split-K, one range of the tile's k-blocks.
//
// Order (grouped raster, for L2 reuse): batch outermost; inside a batch the
// units run in groups of `group_rows` unit rows along M, N-major inside a
// group (the last group may be shorter), so that the CTAs running at once
// share rows of A and columns of B. With split-K, work item w is split
// w % splits of unit w / splits: a tile's splits run on neighbouring CTAs.
//
// Stream-K (no cluster, no split-K): with U units on G CTAs, the units of
// the whole waves go round as above, and the last S = U mod G units (or
// S + G, when that remainder is under half a wave, so that no CTA's share
// is tiny) are cut into G equal runs of k-blocks, CTA c taking
// [c·T/G, (c+1)·T/G) of their T = S·kblocks. A run covers the ends of
// units or stops inside one; the CTA that covers a unit's last k-block
// finishes it, adding the partial sums of the CTAs before it (each CTA
// leaves at most one: its run's last piece, which it takes first, so that
// the CTA finishing that unit never waits for this one's other pieces).
//
//   TileScheduler sched(k, {.tile_m = 128, .tile_n = 256, .tile_k = 64}, M, N, K, L);
//   sched.for_each([&](const WorkItem& w) {  // w.tile.m0, w.tile.n0, w.tile.batch, [w.kb0, w.kb1)
//     ... mainloop over the k-blocks, epilogue ...
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "warpforge/dsl/kernel.hpp"
#include "warpforge/tile/work_source.hpp"

namespace warpforge::tile {

struct TileSchedulerOptions {
  int tile_m = 128, tile_n = 128;
  int tile_k = 64;  // K per k-block: a power of two
  int cluster_m = 1, cluster_n = 1;
  int group_rows = 16;  // unit rows per group of the raster
  int splits = 1;       // k-ranges per tile (split-K)
  bool stream_k = false;
};

// The launch's units, as registers or immediates: what the raster needs.
struct UnitGrid {
  dsl::Src units_m;     // unit rows along M
  dsl::Src per_batch;   // units_m · units_n
  dsl::Src group_span;  // units_n · group_rows: the units of one full group
};

// A unit's place in the grid (u32 registers): unit row (along M), unit
// column (along N), batch.
struct UnitCoords {
  dsl::Reg m, n, batch;
};

// The grouped raster: unit index (u32 register, < per_batch · batches) to
// its coordinates.
UnitCoords grouped_raster(dsl::Kernel& k, const dsl::Reg& unit, const UnitGrid& grid,
                          int group_rows);

// Split `split` of the ranges of `per_split` blocks that cover `total`
// (u32 registers): [split · per_split, min((split + 1) · per_split, total)).
// A split that starts at or past `total` has end <= begin: callers either
// choose splits that all start inside (the block-scaled kernels refuse
// others) or clamp begin (TileScheduler::for_each).
struct BlockRange {
  dsl::Reg begin, end;
};
BlockRange split_range(dsl::Kernel& k, const dsl::Reg& split, const dsl::Src& per_split,
                       const dsl::Src& total);

// A stream-K CTA's run: k-blocks [begin, end) of the split units (counted
// from the first split unit's first k-block), its last piece from `split`;
// `partial`: that piece ends inside its unit.
struct StreamKRun {
  dsl::Reg begin, end, split;
  dsl::Pred partial;
};

class WorkCursor;

class TileScheduler final : public WorkSource {
 public:
  // M, N, K, L: u32 registers (kernel parameters), or all four immediates
  // (a kernel specialised for its shapes: the unit grid is then counted on
  // the host, its divisions by immediates). Computes the unit grid and this
  // CTA's place (cluster rank, first unit, step). Throws TileError for
  // sizes below 1 or past 32 bits, a tile_k that is no power of two, a
  // cluster of more than 16 CTAs (the portable maximum is 8; 16 with the
  // non-portable attribute, CUDA programming guide "Thread Block
  // Clusters"), stream-K with a cluster or split-K, or stream-K with
  // immediate sizes.
  TileScheduler(dsl::Kernel& k, const TileSchedulerOptions& options, const dsl::Src& m, const dsl::Src& n,
                const dsl::Src& kdim, const dsl::Src& l);

  const TileSchedulerOptions& options() const { return o_; }
  const dsl::Reg& rank_m() const { return rank_m_; }  // this CTA's tile in its cluster's unit
  const dsl::Reg& rank_n() const { return rank_n_; }
  const dsl::Reg& first_unit() const { return first_; }  // this CTA's (cluster's) first work item
  const dsl::Reg& unit_step() const { return step_; }  // #CTAs (#clusters): the stride of its items
  const dsl::Src& units() const { return units_; }     // units of every batch
  const dsl::Src& work_items() const { return items_; }  // units · splits
  const dsl::Src& kblocks() const { return kblocks_; }   // k-blocks of a whole tile

  // Split-K: the work item `item` (u32 register < work_items) with its split
  // and k-block range (begin clamped to kblocks where a split may start past K).
  WorkItem item(const dsl::Reg& item) const;
  // The CTA's items one at a time, for a role that walks them out of step
  // with a for_each loop (not with stream-K).
  WorkCursor cursor() const;

  // This CTA's tile of unit `unit` (u32 register < units: work items / splits).
  Tile tile(const dsl::Reg& unit) const;
  // This CTA's work items offset, offset + stride, ... of its sequence (two
  // consumer warpgroups taking every other one: offset = the warpgroup,
  // stride 2; absent: all of them). With stream-K: its data-parallel units,
  // then its run's partial piece, then the pieces that end their units
  // (offset and stride are refused: TileError).
  void for_each(const std::function<void(const WorkItem&)>& body, const dsl::Reg* offset = nullptr,
                int stride = 1) const override;
  // Ping-pong: the CTA's next unit exists (unit + #CTAs < units); every
  // unit has kblocks() k-blocks.
  dsl::Pred has_successor(const WorkItem& w) const override;
  dsl::Src pingpong_skip(const WorkItem* after) const override;
  std::optional<ClusterRank> cluster_rank() const override { return ClusterRank{rank_m_, rank_n_}; }

  // Stream-K: the units before the split ones.
  const dsl::Reg& dp_units() const { return dp_units_; }
  // Stream-K: the first k-block of CTA `cta`'s run (c·T/G above), computed
  // anew at each call (the consumers' registers are the accumulators').
  dsl::Reg stream_k_start(const dsl::Reg& cta) const;
  // Stream-K: this CTA's run, computed anew at each call.
  StreamKRun stream_k_run() const;

 private:
  dsl::Kernel* k_;
  TileSchedulerOptions o_;
  dsl::Src units_m_ = 0u, per_batch_ = 0u, group_span_ = 0u, units_ = 0u, items_ = 0u, kblocks_ = 0u, per_split_ = 0u;
  dsl::Reg rank_m_, rank_n_, first_, step_, dp_units_;
  // Immediate sizes where no split starts past K: begin needs no clamp.
  bool splits_all_inside_ = false;

  void for_each_stream_k(const std::function<void(const WorkItem&)>& body) const;
  void count_on_host(const dsl::Src& m, const dsl::Src& n, const dsl::Src& kdim, const dsl::Src& l);
  friend class WorkCursor;
};

// A TileScheduler's items for this CTA one at a time: item() holds the
// current one in registers while valid(); next() moves on to the CTA's next
// (its coordinates written into the same registers where one is left).
class WorkCursor {
 public:
  const WorkItem& item() const { return item_; }
  dsl::Pred valid() const;
  void next();

 private:
  friend class TileScheduler;
  explicit WorkCursor(const TileScheduler& s);
  void load();  // item_ from index_, where valid

  const TileScheduler* s_;
  dsl::Reg index_;
  WorkItem item_;
};

// The host's copy of the order, for tests and tools: the tiles CTA `cta`
// of `ctas` visits, in order (element coordinates, k-blocks [kb0, kb1),
// with stream-K whether the piece is a partial one).
struct HostTile {
  std::int64_t m0, n0, batch, kb0, kb1;
  bool partial = false;
  friend bool operator==(const HostTile&, const HostTile&) = default;
};
std::vector<HostTile> host_tile_order(const TileSchedulerOptions& options, std::int64_t m,
                                      std::int64_t n, std::int64_t k, std::int64_t l,
                                      std::int64_t ctas, std::int64_t cta);

}  // namespace warpforge::tile
