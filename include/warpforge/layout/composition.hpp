// composition: R = A o B, the layout with B's shape (hierarchy kept) whose
// value at every coordinate c is A(B(c)) (CUTLASS "CuTe Layout Algebra",
// Composition). Each leaf s:d of B is resolved against coalesce(A) by first
// dividing A's modes by d, then keeping s coordinates of what remains; both
// steps need exact division (the "stride divisibility" and "shape
// divisibility" conditions), and a violation throws LayoutError naming the
// modes. B's modes are composed one by one, so R(c) == A(B(c)) when B is
// injective; where B's modes overlap, a sum of their offsets may carry from
// one mode of A into the next, which no by-mode result can express. A's last mode is treated as
// unbounded, as in CuTe, so B may index past size(A) along it.
#pragma once

#include <vector>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

Layout composition(const Layout& a, const Layout& b);
// By-mode composition: mode i of A is composed with tiler[i]; A's remaining
// modes are kept. Throws LayoutError when the tiler has more modes than A.
Layout composition(const Layout& a, const std::vector<Layout>& tiler);

}  // namespace warpforge::layout
