// warp::copy: move a RegisterTile between registers and memory, with the
// index arithmetic taken from the tile's layout (each lane's part is emitted
// once; every register's part becomes a constant offset).
//  - global <-> registers: one access per register (a register's elements
//    must be adjacent in memory: b32 for two 16-bit elements, f32 for f32).
//  - shared -> registers: ldmatrix (PTX ISA 9.7.14.5.15), x4/x2/x1, with
//    .trans where the tile's layout is the transpose of the memory rows.
//  - registers -> shared: stmatrix (PTX ISA 9.7.14.5.16, sm_90+), likewise.
// Shared tiles may be swizzled (layout::Swizzle on element offsets).
#pragma once

#include <cstdint>

#include "warpforge/dsl/kernel.hpp"
#include "warpforge/layout/swizzle.hpp"
#include "warpforge/tile/register_tile.hpp"

namespace warpforge::tile {

// A tile in global memory: element (r, c) at base + (r·ld + c)·bytes when
// row-major, base + (c·ld + r)·bytes when column-major. base is a 64-bit
// global address; ld (elements) may be a register or an immediate. The caller
// keeps each register's access aligned (for 16-bit types: base 4-byte aligned
// and ld even).
struct GlobalTile {
  dsl::Reg base;
  dsl::Src ld;
  bool row_major = true;
};

// A tile in shared memory: element (r, c) at base + swizzle(r·ld + c)·bytes
// (row-major; column-major swaps r and c). base is a 32-bit shared address;
// ld is in elements. For ldmatrix/stmatrix every 8-element row must start on
// a 16-byte boundary.
struct SharedTile {
  dsl::Reg base;
  std::int64_t ld;
  bool row_major = true;
  layout::Swizzle swizzle = {};
};

namespace warp {

void copy(dsl::Kernel& k, const GlobalTile& src, const RegisterTile& dst);
void copy(dsl::Kernel& k, const RegisterTile& src, const GlobalTile& dst);
// Returns the instructions used, e.g. "ldmatrix.x4 x2" (two x4 loads).
std::string copy(dsl::Kernel& k, const SharedTile& src, const RegisterTile& dst);
std::string copy(dsl::Kernel& k, const RegisterTile& src, const SharedTile& dst);

}  // namespace warp
}  // namespace warpforge::tile
