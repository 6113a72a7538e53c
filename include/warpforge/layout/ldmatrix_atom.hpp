// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 (PTX ISA
// 9.7.14.5.15, "Warp-level matrix load instruction: ldmatrix"): a warp loads 1, 2 or 4 matrices of
// 8 x 8 b16 elements. Lanes 8i .. 8i+7 supply the addresses of rows 0..7 of matrix i (only lanes
// below 8 * count are read). Destination register i holds matrix i: lane l receives row l / 4,
// columns 2 * (l % 4) and +1, low half first; with .trans it receives the transposed elements, rows
// 2 * (l % 4) and +1 of column l / 4.
//
// Both maps are given over the stacked tile of 8 * count rows by 8 columns, in
// which matrix i is rows 8i .. 8i+7, as they lie in memory (one 16-byte row
// per address).
#pragma once

#include "warpforge/layout/fragment.hpp"

namespace warpforge::layout {

struct LdmatrixAtom {
  int matrices;
  bool transpose;
  // (lane) -> (row) of the stacked tile whose address that lane supplies.
  NamedLayout row_addresses;
  // (lane, value) -> (row, col) of the stacked tile; value 2i + h is half h of
  // destination register i.
  Fragment result;
};

// Throws LayoutError unless matrices is 1, 2 or 4.
LdmatrixAtom ldmatrix(int matrices, bool transpose);

}  // namespace warpforge::layout
