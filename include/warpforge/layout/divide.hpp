// Division: split a layout into tiles of B and the layout of those tiles
// (CUTLASS "CuTe Layout Algebra", Division).
//   logical_divide(A, B) = A o (B, complement(B, size(A)))  -> (tile, rest)
// The tiler forms apply one layout per mode of A; zipped_divide gathers the
// result as ((tiles...), (rests...)) and tiled_divide as ((tiles...), rests...).
#pragma once

#include <vector>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

Layout logical_divide(const Layout& a, const Layout& tile);
Layout logical_divide(const Layout& a, const std::vector<Layout>& tiler);
Layout zipped_divide(const Layout& a, const std::vector<Layout>& tiler);
Layout tiled_divide(const Layout& a, const std::vector<Layout>& tiler);

}  // namespace warpforge::layout
