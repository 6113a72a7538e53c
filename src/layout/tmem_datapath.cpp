#include "warpforge/layout/tmem_datapath.hpp"

#include <string>
#include <vector>

#include "tile_steps.hpp"
#include "warpforge/error.hpp"

namespace warpforge::layout {

Fragment tmem_datapath(TmemDataPath shape, int64_t num) {
  using detail::steps;
  struct Shape {
    const char* name;
    int64_t rows, cols_per_repeat, max_num;
  };
  const Shape s = shape == TmemDataPath::lanes32_bits32    ? Shape{"32x32b", 32, 1, 128}
                  : shape == TmemDataPath::lanes16_bits64  ? Shape{"16x64b", 16, 2, 128}
                  : shape == TmemDataPath::lanes16_bits128 ? Shape{"16x128b", 16, 4, 64}
                                                           : Shape{"16x256b", 16, 8, 32};
  if (num < 1 || num > s.max_num || (num & (num - 1)) != 0)
    throw LayoutError("tmem_datapath: ." + std::string(s.name) +
                      " with .num = " + std::to_string(num) + "; a power of two in 1.." +
                      std::to_string(s.max_num) + " (PTX ISA 9.7.16, tcgen05.ld's .num table)");
  const int64_t rows = s.rows, repeat = s.cols_per_repeat;
  // The lane and value modes of each figure, as (extent, row step, column step).
  auto mode = [&](std::vector<detail::TileStep> lane, std::vector<detail::TileStep> value) {
    value.push_back({num, 0, repeat});
    return make_layout({steps(rows, lane), steps(rows, value)});
  };
  const Layout tv = shape == TmemDataPath::lanes32_bits32 ? mode({{32, 1, 0}}, {})
                    : shape == TmemDataPath::lanes16_bits64
                        ? mode({{2, 8, 0}, {2, 0, 1}, {8, 1, 0}}, {})
                    : shape == TmemDataPath::lanes16_bits128
                        ? mode({{4, 0, 1}, {8, 1, 0}}, {{2, 8, 0}})
                        : mode({{4, 0, 2}, {8, 1, 0}}, {{2, 0, 1}, {2, 8, 0}});
  return Fragment{
      NamedLayout("tcgen05." + std::string(s.name) + ".x" + std::to_string(num),
                  {Axis::lane, Axis::value}, tv, {{Axis::row, rows}, {Axis::col, repeat * num}}),
      32};
}

}  // namespace warpforge::layout
