// Products: repeat a layout A according to a layout B (CUTLASS "CuTe Layout
// Algebra", Product).
//   logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) o B)
// The tiler forms apply one layout per mode; zipped/tiled gather like the
// divides. blocked_product and raked_product work mode by mode on rank-r
// layouts: mode i of the blocked product is (A_i, B'_i), so each copy of A is a
// contiguous block; the raked product is (B'_i, A_i), so the copies interleave.
// tile_to_shape repeats a block (blocked) until it has the given shape.
#pragma once

#include <vector>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

Layout logical_product(const Layout& a, const Layout& b);
Layout logical_product(const Layout& a, const std::vector<Layout>& tiler);
Layout zipped_product(const Layout& a, const std::vector<Layout>& tiler);
Layout tiled_product(const Layout& a, const std::vector<Layout>& tiler);
Layout blocked_product(const Layout& block, const Layout& repeat);
Layout raked_product(const Layout& block, const Layout& repeat);
// Throws LayoutError unless each extent of `shape` is a multiple of the
// block's size in that mode, and the shape has at least the block's rank.
Layout tile_to_shape(const Layout& block, const IntTuple& shape);

}  // namespace warpforge::layout
