// Internal: building a thread-value layout over a column-major rows x cols
// tile from steps written the way the PTX ISA states fragments ("row =
// groupID + 8 for a2, a3; col = threadID_in_group * 2 + (i & 1)"): each step
// is a mode of some extent that moves the element by (row_step, col_step).
#pragma once

#include <cstdint>
#include <vector>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout::detail {

struct TileStep {
  int64_t extent;
  int64_t row_step;
  int64_t col_step;
};

// One layout mode made of the given steps, first step fastest.
inline Layout steps(int64_t rows, const std::vector<TileStep>& list) {
  std::vector<IntTuple> shape, stride;
  for (const TileStep& s : list) {
    shape.emplace_back(s.extent);
    stride.emplace_back(s.row_step + rows * s.col_step);
  }
  if (list.size() == 1) return Layout(shape[0], stride[0]);
  return Layout(IntTuple(shape), IntTuple(stride));
}

}  // namespace warpforge::layout::detail
