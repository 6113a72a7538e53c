// complement(A, M): the layout of the offsets A does not reach, ordered so
// that make_layout({A, complement(A, M)}) is injective and covers [0, M)
// (CUTLASS "CuTe Layout Algebra", Complement). With A's modes sorted by stride,
// (s_i:d_i), the complement fills each gap: shapes
// (d_0, d_1/(s_0 d_0), ..., ceil(M/(s_n d_n))) with strides (1, s_0 d_0, ...).
// Size-1 and stride-0 modes of A are ignored. A LayoutError names the modes
// when a stride is not a multiple of the span below it (A overlaps itself or
// leaves a gap no layout can fill).
#pragma once

#include <cstdint>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

Layout complement(const Layout& a, int64_t cotarget);
// complement(a, cosize(a)).
Layout complement(const Layout& a);

}  // namespace warpforge::layout
