#include "warpforge/layout/mma_atoms.hpp"

#include "tile_steps.hpp"

namespace warpforge::layout {

namespace {

using detail::steps;

// A warp's lanes as (threadID_in_group, groupID): lane = t0 + 4 * t1.
Fragment fragment(const std::string& name, int64_t rows, int64_t cols, int bits,
                  const std::vector<detail::TileStep>& lane,
                  const std::vector<detail::TileStep>& value) {
  Layout tv = make_layout({steps(rows, lane), steps(rows, value)});
  return Fragment{
      NamedLayout(name, {Axis::lane, Axis::value}, tv, {{Axis::row, rows}, {Axis::col, cols}}),
      bits};
}

// The f32 accumulator of every m16n8 shape (PTX ISA 9.7.14.5.7 and on, C/D):
// row = groupID + 8 * (i >= 2), col = threadID_in_group * 2 + (i & 1).
Fragment accumulator_16x8(const std::string& name) {
  return fragment(name, 16, 8, 32, {{4, 0, 2}, {8, 1, 0}}, {{2, 0, 1}, {2, 8, 0}});
}

}  // namespace

MmaAtom mma_m16n8k8_f16() {
  const std::string op = "mma.m16n8k8.f16";
  return MmaAtom{
      op,
      16,
      8,
      8,
      // PTX ISA 9.7.14.5.7, A (.f16/.bf16): row = groupID (+8 for a2, a3),
      // col = threadID_in_group * 2 + (i & 1).
      fragment(op + ".A", 16, 8, 16, {{4, 0, 2}, {8, 1, 0}}, {{2, 0, 1}, {2, 8, 0}}),
      // B: row = threadID_in_group * 2 + i, col = groupID.
      fragment(op + ".B", 8, 8, 16, {{4, 2, 0}, {8, 0, 1}}, {{2, 1, 0}}),
      accumulator_16x8(op + ".C"),
  };
}

MmaAtom mma_m16n8k16_f16() {
  const std::string op = "mma.m16n8k16.f16";
  return MmaAtom{
      op,
      16,
      8,
      16,
      // PTX ISA 9.7.14.5.8, A: row = groupID (+8 for a2, a3, a6, a7),
      // col = threadID_in_group * 2 + (i & 1) (+8 for i >= 4).
      fragment(op + ".A", 16, 16, 16, {{4, 0, 2}, {8, 1, 0}}, {{2, 0, 1}, {2, 8, 0}, {2, 0, 8}}),
      // B: row = threadID_in_group * 2 + (i & 1) (+8 for i >= 2), col = groupID.
      fragment(op + ".B", 16, 8, 16, {{4, 2, 0}, {8, 0, 1}}, {{2, 1, 0}, {2, 8, 0}}),
      accumulator_16x8(op + ".C"),
  };
}

MmaAtom mma_m16n8k32_f8() {
  const std::string op = "mma.m16n8k32.f8";
  return MmaAtom{
      op,
      16,
      8,
      32,
      // PTX ISA 9.7.14.5, "Matrix Fragments for mma.m16n8k32", A (.e4m3/.e5m2,
      // four per register): row = groupID
      // (+8 for 4 <= i < 8 and i >= 12), col = threadID_in_group * 4 + (i & 3)
      // (+16 for i >= 8).
      fragment(op + ".A", 16, 32, 8, {{4, 0, 4}, {8, 1, 0}}, {{4, 0, 1}, {2, 8, 0}, {2, 0, 16}}),
      // B: row = threadID_in_group * 4 + (i & 3) (+16 for i >= 4), col = groupID.
      fragment(op + ".B", 32, 8, 8, {{4, 4, 0}, {8, 0, 1}}, {{4, 1, 0}, {2, 16, 0}}),
      accumulator_16x8(op + ".C"),
  };
}

}  // namespace warpforge::layout
