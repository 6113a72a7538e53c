#include "warpforge/layout/ldmatrix_atom.hpp"

#include "tile_steps.hpp"
#include "warpforge/error.hpp"

namespace warpforge::layout {

LdmatrixAtom ldmatrix(int matrices, bool transpose) {
  if (matrices != 1 && matrices != 2 && matrices != 4) {
    throw LayoutError("ldmatrix: " + std::to_string(matrices) +
                      " matrices; the instruction loads .x1, .x2 or .x4");
  }
  const std::string name =
      "ldmatrix.m8n8.x" + std::to_string(matrices) + (transpose ? ".trans" : "") + ".b16";
  const int64_t rows = 8 * matrices;
  using detail::steps;
  // Lanes (threadID_in_group, groupID) and values (half h, register i).
  Layout tv = transpose ? make_layout({steps(rows, {{4, 2, 0}, {8, 0, 1}}),
                                       steps(rows, {{2, 1, 0}, {matrices, 8, 0}})})
                        : make_layout({steps(rows, {{4, 0, 2}, {8, 1, 0}}),
                                       steps(rows, {{2, 0, 1}, {matrices, 8, 0}})});
  return LdmatrixAtom{
      matrices,
      transpose,
      NamedLayout(name + ".addresses", {Axis::lane}, make_layout({Layout(rows, 1)}),
                  {{Axis::row, rows}}),
      Fragment{
          NamedLayout(name, {Axis::lane, Axis::value}, tv, {{Axis::row, rows}, {Axis::col, 8}}),
          16},
  };
}

}  // namespace warpforge::layout
