// Inverses of layouts (CUTLASS "CuTe Layout Algebra"; Cecka, "CuTe Layout
// Representation and Algebra", right and left inverse).
//   right_inverse(L) = R with L(R(i)) == i for every i < size(R); R is as long
//     as the run of offsets 0, 1, 2, ... that L reaches contiguously.
//   left_inverse(L) = R with R(L(x)) == x for every x < size(L), for L injective
//     and complementable.
// For a bijection onto [0, size) both are the inverse.
#pragma once

#include <cstdint>
#include <optional>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

// Whether distinct indices map to distinct offsets.
bool is_injective(const Layout& layout);
// Whether the layout is a bijection onto [0, size).
bool is_bijective(const Layout& layout);
Layout right_inverse(const Layout& layout);
// Throws LayoutError when the layout is not injective or not complementable.
Layout left_inverse(const Layout& layout);
// The 1-D index that maps to `offset`, or nullopt when no index does. Throws
// LayoutError when the layout is not injective.
std::optional<int64_t> index_of(const Layout& layout, int64_t offset);
// The natural (hierarchical) coordinate that maps to `offset`, or nullopt; as
// index_of.
std::optional<IntTuple> coordinate_of(const Layout& layout, int64_t offset);

}  // namespace warpforge::layout
