// coalesce: the shortest flat layout computing the same function on 1-D
// indices. Size-1 modes are dropped and neighbours (s0:d0),(s1:d1) with
// d1 == s0*d0 merge into (s0*s1):d0 (CuTe's coalesce, CUTLASS "CuTe Layout
// Algebra").
#pragma once

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

Layout coalesce(const Layout& layout);

}  // namespace warpforge::layout
