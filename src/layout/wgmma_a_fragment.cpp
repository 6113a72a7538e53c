#include "warpforge/layout/wgmma_a_fragment.hpp"

#include <string>

#include "tile_steps.hpp"
#include "warpforge/error.hpp"

namespace warpforge::layout {

Fragment wgmma_a_fragment(int element_bits) {
  if (element_bits != 16 && element_bits != 8)
    throw LayoutError("wgmma_a_fragment: " + std::to_string(element_bits) +
                      "-bit elements; wgmma takes A from registers as 16-bit (bf16, f16) or 8-bit (e4m3, e5m2) "
                      "elements");
  using detail::steps;
  // One .b32 register holds `per` consecutive K elements; a thread's four
  // registers are (row, row + 8) x (K block, K block + 4 * per).
  const int64_t per = 32 / element_bits, k = 8 * per;
  Layout tv = make_layout({
      steps(64, {{4, 0, per}, {8, 1, 0}}),              // lane: lane % 4 -> per columns, lane / 4 -> row
      steps(64, {{4, 16, 0}}),                          // warp -> 16 rows
      steps(64, {{per, 0, 1}, {2, 8, 0}, {2, 0, 4 * per}})  // value: next column, row + 8, K's second half
  });
  return Fragment{NamedLayout("wgmma.m64k" + std::to_string(k) + ".A", {Axis::lane, Axis::warp, Axis::value}, tv,
                              {{Axis::row, 64}, {Axis::col, k}}),
                  element_bits};
}

}  // namespace warpforge::layout
