// A shared-memory tile under one of the Hopper swizzle modes, the warp access
// patterns `warpforge layout smem` counts bank conflicts for, and its picture:
// the tile's 4-byte words, each coloured and labelled by the bank it lands in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grid.hpp"
#include "warpforge/layout/bank_conflicts.hpp"
#include "warpforge/layout/swizzle.hpp"

namespace warpforge::pictures {

// A row-major rows x cols tile of element_bytes elements at a shared address
// aligned to the swizzle's repeat, each element stored at
// smem_swizzle(mode, element_bytes)(row * cols + col): what TMA writes with
// that swizzle and ldmatrix / wgmma read back.
struct SmemTile {
  int64_t rows = 8;
  int64_t cols = 64;
  int element_bytes = 2;
  layout::SmemSwizzle swizzle = layout::SmemSwizzle::b128;

  // Throws LayoutError unless rows and cols are >= 1, element_bytes is 1, 2, 4
  // or 8, a row is a whole number of 16-byte chunks, and a swizzled row is
  // exactly the swizzle's span (32, 64 or 128 bytes).
  void check() const;
  int64_t row_bytes() const { return cols * element_bytes; }
  // The byte address of element (row, col) from the tile's base.
  int64_t byte_address(int64_t row, int64_t col) const;
};

// Which bytes each of a warp's 32 lanes reads (lanes that read nothing are
// left out).
struct WarpAccess {
  std::string description;
  std::vector<int64_t> byte_addresses;  // in lane order
  int access_bytes;
};

// Parses and builds an access pattern over `tile`:
//   ldmatrix   ldmatrix.x4 (2-byte elements): four 8 x 8 matrices, the tile's
//              first four 8 x 8 blocks going down the columns first (a 16-row
//              tile: rows 0-7 then 8-15 of columns 0-7, then of 8-15, the
//              mma A operand's order); lanes 8i..8i+7 give the 16-byte row
//              addresses of matrix i.
//   rows:W     lane t reads W bytes at logical byte t * W of the tile, walking
//              along the rows (row 0, then row 1, ...).
//   cols:W     lane t reads W bytes in row t mod R, at logical byte
//              W * floor(t / R) of that row: walking down the columns.
// W is 1, 2, 4, 8 or 16 bytes, at least one element. Throws LayoutError for
// another pattern, naming the accepted ones, or a tile too small for it.
WarpAccess warp_access(const SmemTile& tile, const std::string& pattern);

// The tile's words (rows x row_bytes / 4 cells) labelled and coloured by bank;
// the words `access` reads are marked, and the notes say what a cell is and
// give the access's bank conflicts.
Grid bank_grid(const SmemTile& tile, const WarpAccess& access);

}  // namespace warpforge::pictures
