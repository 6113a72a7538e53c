#include "warpforge/layout/mfma_atom.hpp"

#include "tile_steps.hpp"

namespace warpforge::layout {

namespace {
Fragment wave_fragment(const std::string& name, int64_t rows, int64_t cols, int bits,
                       const std::vector<detail::TileStep>& lane,
                       const std::vector<detail::TileStep>& value) {
  Layout tv = make_layout({detail::steps(rows, lane), detail::steps(rows, value)});
  return Fragment{
      NamedLayout(name, {Axis::lane, Axis::value}, tv, {{Axis::row, rows}, {Axis::col, cols}}),
      bits};
}
}  // namespace

MfmaAtom mfma_f32_32x32x8_bf16() {
  const std::string op = "v_mfma_f32_32x32x8_bf16";
  return MfmaAtom{
      op,
      32,
      32,
      8,
      // Lane = (i: 32, k / 4: 2); value = k % 4.
      wave_fragment(op + ".A", 32, 8, 16, {{32, 1, 0}, {2, 0, 4}}, {{4, 0, 1}}),
      // Lane = (j: 32, k / 4: 2); value = k % 4.
      wave_fragment(op + ".B", 8, 32, 16, {{32, 0, 1}, {2, 4, 0}}, {{4, 1, 0}}),
      // Lane = (j: 32, half of the wave: 2 -> i + 4); value = (r % 4 -> i, r / 4 -> i + 8).
      wave_fragment(op + ".C", 32, 32, 32, {{32, 0, 1}, {2, 4, 0}}, {{4, 1, 0}, {4, 8, 0}}),
  };
}

}  // namespace warpforge::layout
