// A 2-D picture of a layout for debugging: rows index mode 0, columns mode 1
// (a rank-1 layout is one column), each cell the offset. For example
// to_table(Layout({2, 3}, {3, 1})):
//
//   (2,3):(3,1)
//       0 1 2
//     +------
//   0 | 0 1 2
//   1 | 3 4 5
#pragma once

#include <string>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

// Throws LayoutError for a layout of rank above 2.
std::string to_table(const Layout& layout);

}  // namespace warpforge::layout
