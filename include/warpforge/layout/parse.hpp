// Reading layouts from text, in the notation to_string writes: an IntTuple is
// an integer or a parenthesised, comma-separated list of IntTuples, and a
// layout is `Shape:Stride`, e.g. `((8,4),(2,2)):((4,1),(32,64))`. Spaces are
// allowed between tokens. A Shape alone stands for its compact column-major
// layout, as in CuTe.
#pragma once

#include <string_view>

#include "warpforge/layout/int_tuple.hpp"
#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

// Throws LayoutError naming the 0-based character position, what was found
// there and what was expected, for text that is not one IntTuple.
IntTuple parse_int_tuple(std::string_view text);
// Throws LayoutError as parse_int_tuple does, and as Layout's constructor does
// for a stride not congruent with its shape or an extent below 1.
Layout parse_layout(std::string_view text);

}  // namespace warpforge::layout
