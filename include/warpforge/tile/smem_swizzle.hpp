// Swizzled shared-memory addresses computed in a kernel, from the
// layout::Swizzle that describes them (layout/swizzle.hpp). A Swizzle<B, M, S>
// on byte offsets XORs the B bits at [M, M+B) (the 2^M-byte chunk within its
// row, for Hopper's modes M = 4: 16-byte chunks) with the B bits at
// [M+S, M+S+B) (the row's phase). A kernel that knows both computes the
// swizzled chunk's offset without the rest of the address:
//
//   const layout::Swizzle sw = layout::smem_swizzle(layout::SmemSwizzle::b128, 1);  //
//   Swizzle<3,4,3> Reg at = row_address + tile::swizzled_chunk(k, sw, chunk, row % 8);
#pragma once

#include "warpforge/dsl/kernel.hpp"
#include "warpforge/layout/swizzle.hpp"

namespace warpforge::tile {

// ((chunk mod 2^B) ^ phase) << M, three instructions (and, xor, shl): the
// byte offset within its row of chunk `chunk` in a row of phase `phase`
// (< 2^B: bits [M+S, M+S+B) of the row's offset). Throws TileError for
// the identity swizzle (B = 0), where no chunk moves.
dsl::Reg swizzled_chunk(dsl::Kernel& k, const layout::Swizzle& swizzle, const dsl::Reg& chunk,
                        const dsl::Src& phase);

}  // namespace warpforge::tile
