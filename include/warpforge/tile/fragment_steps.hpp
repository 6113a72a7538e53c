// A fragment layout read as separate row and column steps. An mma or ldmatrix
// fragment maps (lane, value) to a tile element whose row and column are each
// a sum of per-leaf contributions: leaf i of the lane mode moves the element by
// (row_i, col_i) per unit of its coordinate. That is what lets a tile
// primitive emit the lane's part of the index arithmetic once and fold every
// register's part into a constant. `separate` finds the steps and proves the
// property on every (lane, value) point; a layout without it is refused.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "warpforge/dsl/kernel_core.hpp"
#include "warpforge/layout/named_layout.hpp"

namespace warpforge::tile {

struct Step {
  std::int64_t extent;
  std::int64_t row;
  std::int64_t col;
};

struct FragmentSteps {
  std::int64_t rows = 0, cols = 0;
  std::vector<Step> lane;   // leaves of the lane mode, fastest first
  std::vector<Step> value;  // leaves of the value mode, fastest first

  std::int64_t lanes() const;
  std::int64_t values() const;
  // (row, col) reached by the value part alone (lane 0).
  std::pair<std::int64_t, std::int64_t> value_offset(std::int64_t value) const;
  // (row, col) reached by the lane part alone (value 0).
  std::pair<std::int64_t, std::int64_t> lane_offset(std::int64_t lane) const;
};

// Throws TileError unless `fragment` has the domain (lane, value), the codomain
// (row, col), and separable steps.
FragmentSteps separate(const layout::NamedLayout& fragment);

// The fragment with these steps as a NamedLayout over a rows × cols tile.
layout::NamedLayout assemble(const std::string& name, const FragmentSteps& steps);

// True when the two layouts map every (lane, value) to the same element.
bool same_mapping(const layout::NamedLayout& a, const layout::NamedLayout& b);

// Emits the lane's row and column (u32 registers) for the lane held in `lane`:
// for each leaf, ((lane >> shift) & (extent - 1)) scaled by its steps.
// Extents must be powers of two (true of every NVIDIA fragment).
struct LaneCoords {
  dsl::Reg row;
  dsl::Reg col;
};
LaneCoords emit_lane_coords(dsl::KernelCore& k, const FragmentSteps& steps, const dsl::Reg& lane);

}  // namespace warpforge::tile
