// Where a persistent Hopper kernel's work comes from: a work source hands
// each CTA its work items in order, each a tile of the output (or whatever a
// design makes of its coordinates) and the k-blocks of it that the item
// covers. The warp-specialized template (warp_specialized.hpp) walks one
// source in every role, so the producer loads and the consumers compute
// the same items in the same order. TileScheduler (tile_scheduler.hpp) is
// the GEMMs' source; a design brings its own for other orders (attention's
// (batch, head, query block) items with per-item k-block counts, a grouped
// GEMM's tiles over group offsets read from device memory).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "warpforge/dsl/kernel.hpp"

namespace warpforge::tile {

// This CTA's tile of a work item: element coordinates of its corner (u32),
// its batch, and the unit (the item's index in the source's order, without
// its split). Sources that are not GEMM tiles say what they put where.
struct Tile {
  dsl::Reg m0, n0, batch, unit;
};

// One work item: a tile and the k-blocks [kb0, kb1) it covers (the stages
// the producer loads and the consumers read for it). With stream-K,
// `partial` (u32) is nonzero when the piece ends before the tile's last
// k-block: its sum is for the CTA that finishes the tile. With split-K,
// `split` (u32) is which of the tile's k-ranges the item is (0 ..
// splits-1; split 0 finishes the tile). `extra`: any further registers a
// design's source computes per item (e.g. a group's last row), in the order
// its source documents.
struct WorkItem {
  Tile tile;
  dsl::Reg kb0, kb1;
  std::optional<dsl::Reg> partial;
  std::optional<dsl::Reg> split;
  std::vector<dsl::Reg> extra;
};

// A CTA's place in its cluster as the source lays units out: its tile's
// row (along M) and column (along N) in the cluster's unit.
struct ClusterRank {
  dsl::Reg m, n;
};

class WorkSource {
 public:
  virtual ~WorkSource() = default;

  // Emits the loop over this CTA's work items: `body` once, emitting the
  // item's code, inside a loop that runs it for items offset, offset +
  // stride, ... of the CTA's sequence (two ping-pong consumer warpgroups
  // take every other one: offset = the warpgroup, stride 2; absent: all).
  virtual void for_each(const std::function<void(const WorkItem&)>& body,
                        const dsl::Reg* offset = nullptr, int stride = 1) const = 0;

  // Ping-pong: whether the CTA's sequence has an item after `w` (the other
  // consumer warpgroup's next). The default refuses (TileError): a source
  // that serves ping-pong says it.
  virtual dsl::Pred has_successor(const WorkItem& w) const;
  // Ping-pong: the pipeline slots (k-blocks) of the item the other consumer
  // warpgroup takes before this one's next: the CTA's first item when
  // `after` is null (warpgroup 1 skips it), else the item after `after`.
  // The default refuses (TileError).
  virtual dsl::Src pingpong_skip(const WorkItem* after) const;

  // In a cluster launch: this CTA's place in its cluster's unit, from which
  // the template builds the multicast masks. nullopt: the source lays out
  // no clusters (a cluster launch refuses it).
  virtual std::optional<ClusterRank> cluster_rank() const { return std::nullopt; }
};

}  // namespace warpforge::tile
