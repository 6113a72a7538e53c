// Layouts as Grids. A thread-value layout (a NamedLayout whose codomain is
// (row, col)) becomes its tile with each element labelled by the thread and
// value that hold it, T<thread>V<value>, where thread = lane + 32 * warp +
// 128 * warpgroup for the axes the layout has: CuTe's picture of a TV layout.
// A plain Layout becomes its coordinate grid with each cell's offset.
#pragma once

#include "grid.hpp"
#include "warpforge/layout/named_layout.hpp"

namespace warpforge::pictures {

// Cells are coloured by thread. A cell no domain point reaches is labelled
// "-"; one reached by several shows its first owner (lowest domain index)
// with "+n" for the n others, and the notes count both kinds. Throws
// LayoutError unless the codomain is exactly (row, col).
Grid thread_value_grid(const layout::NamedLayout& layout);

// Rows index mode 0, columns mode 1 (a rank-1 layout is one column); each cell
// holds its offset, coloured by it. Throws LayoutError above rank 2.
Grid offset_grid(const layout::Layout& layout);

}  // namespace warpforge::pictures
