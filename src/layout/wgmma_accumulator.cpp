#include "warpforge/layout/wgmma_accumulator.hpp"

#include "tile_steps.hpp"
#include "warpforge/error.hpp"

namespace warpforge::layout {

Fragment wgmma_accumulator(int64_t n) {
  if (n < 8 || n > 256 || n % 8 != 0) {
    throw LayoutError("wgmma_accumulator: N = " + std::to_string(n) +
                      "; wgmma m64nNk16 takes N = 8, 16, ..., 256");
  }
  using detail::steps;
  Layout tv = make_layout({
      steps(64, {{4, 0, 2}, {8, 1, 0}}),  // lane: (lane % 4 -> col 2, lane / 4 -> row)
      steps(64, {{4, 16, 0}}),            // warp -> row 16
      steps(64, {{2, 0, 1}, {2, 8, 0}, {n / 8, 0, 8}})  // value: col + 1, row + 8, next 8 columns
  });
  return Fragment{
      NamedLayout("wgmma.m64n" + std::to_string(n) + "k16.D", {Axis::lane, Axis::warp, Axis::value},
                  tv, {{Axis::row, 64}, {Axis::col, n}}),
      32};
}

}  // namespace warpforge::layout
