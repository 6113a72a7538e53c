#include <gtest/gtest.h>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/ldmatrix_atom.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/tile/register_tile.hpp"

namespace warpforge::tile {
namespace {

using layout::Axis;

std::vector<layout::Fragment> all_mma_fragments() {
  std::vector<layout::Fragment> out;
  for (const auto& atom : {layout::mma_m16n8k8_f16(), layout::mma_m16n8k16_f16(), layout::mma_m16n8k32_f8()}) {
    out.push_back(atom.a);
    out.push_back(atom.b);
    out.push_back(atom.c);
  }
  return out;
}

TEST(FragmentSteps, SeparateEveryMmaAndLdmatrixFragmentExactly) {
  auto fragments = all_mma_fragments();
  for (int n : {1, 2, 4})
    for (bool t : {false, true}) fragments.push_back(layout::ldmatrix(n, t).result);
  for (const auto& f : fragments) {
    FragmentSteps s = separate(f.layout);
    EXPECT_EQ(s.lanes(), 32) << f.layout.name();
    EXPECT_EQ(s.values(), f.layout.extent(Axis::value)) << f.layout.name();
    for (std::int64_t l = 0; l < 32; ++l)
      for (std::int64_t v = 0; v < s.values(); ++v) {
        auto p = f.layout({{Axis::lane, l}, {Axis::value, v}});
        EXPECT_EQ(s.lane_offset(l).first + s.value_offset(v).first, p.at(Axis::row));
        EXPECT_EQ(s.lane_offset(l).second + s.value_offset(v).second, p.at(Axis::col));
      }
    EXPECT_TRUE(same_mapping(assemble("again", s), f.layout)) << f.layout.name();
  }
}

TEST(FragmentSteps, TileLayoutsAreBijectionsOntoTheTile) {
  for (const auto& f : all_mma_fragments()) {
    std::int64_t r = f.layout.extent(Axis::row), c = f.layout.extent(Axis::col);
    for (std::int64_t gm : {1, 2, 3})
      for (std::int64_t gn : {1, 2, 4}) {
        FragmentSteps s = tile_steps(f, r * gm, c * gn);
        std::vector<int> hits(static_cast<std::size_t>(r * gm * c * gn), 0);
        for (std::int64_t l = 0; l < 32; ++l)
          for (std::int64_t v = 0; v < s.values(); ++v) {
            auto [lr, lc] = s.lane_offset(l);
            auto [vr, vc] = s.value_offset(v);
            ASSERT_LT(lr + vr, r * gm);
            ASSERT_LT(lc + vc, c * gn);
            ++hits[static_cast<std::size_t>((lr + vr) * c * gn + lc + vc)];
          }
        for (int h : hits) EXPECT_EQ(h, 1) << f.layout.name() << " " << gm << "x" << gn;
      }
  }
}

TEST(FragmentSteps, RefuseTilesThatAreNotAGridOfAtoms) {
  auto atom = layout::mma_m16n8k16_f16();
  try {
    tile_steps(atom.a, 24, 16);
    FAIL() << "24 rows accepted";
  } catch (const TileError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("tile 24x16 is not a grid of mma.m16n8k16.f16.A atoms (16x16)"), std::string::npos) << m;
  }
}

TEST(FragmentSteps, RefuseAFragmentWithoutLaneAndValue) {
  layout::NamedLayout rows("rows only", {Axis::lane}, layout::Layout(32, 1), {{Axis::row, 32}});
  EXPECT_THROW(separate(rows), TileError);
}

// separate() proves a mapping once a process and keeps the steps: keyed by
// the mapping (the layout and its tile), not the name, and a refusal is not kept.
TEST(FragmentSteps, AreKeptByMappingAndRefusedEveryTime) {
  const layout::Layout four_lanes = layout::make_layout({layout::Layout(4, 1), layout::Layout(1, 1)});
  const layout::NamedLayout column("column", {Axis::lane, Axis::value}, four_lanes, {{Axis::row, 4}, {Axis::col, 1}});
  const layout::NamedLayout renamed("renamed", {Axis::lane, Axis::value}, four_lanes, {{Axis::row, 4}, {Axis::col, 1}});
  const FragmentSteps first = separate(column), second = separate(renamed);
  ASSERT_EQ(first.lane.size(), 1u);
  ASSERT_EQ(second.lane.size(), 1u);
  EXPECT_EQ(second.lane[0].row, first.lane[0].row);
  EXPECT_EQ(first.lane[0].row, 1);
  // The same layout over a 2x2 tile: lane 2 lands in column 1, no row step reaches it.
  const layout::NamedLayout square("square", {Axis::lane, Axis::value}, four_lanes, {{Axis::row, 2}, {Axis::col, 2}});
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      separate(square);
      FAIL() << "attempt " << attempt << ": a 2x2 tile's lanes were taken as row steps";
    } catch (const TileError& e) {
      EXPECT_NE(std::string(e.what()).find("fragment 'square': lane 2, value 0 does not split"), std::string::npos)
          << e.what();
    }
  }
}

TEST(RegisterTile, AllocatesRegistersAndChecksTheElementWidth) {
  dsl::Kernel k("tiles", ptx::Target::sm_80);
  auto atom = layout::mma_m16n8k16_f16();
  auto a = RegisterTile::allocate(k, atom.a, 32, 32, ptx::Type::bf16, "a");
  EXPECT_EQ(a.regs().size(), 16u);  // 2×2 atoms of 4 b32 registers
  EXPECT_EQ(a.regs()[0].type(), ptx::Type::b32);
  EXPECT_EQ(a.describe(), "a[32x32] bf16 warp (mma.m16n8k16.f16.A x 2x2)");
  // Atom (1, 0) is the second in column-major order: registers 4..7.
  EXPECT_EQ(a.atom_regs(16, 8, 1, 0)[0].name(), "%a4");
  auto d = RegisterTile::allocate(k, atom.c, 16, 8, ptx::Type::f32, "d");
  EXPECT_EQ(d.regs()[0].type(), ptx::Type::f32);
  try {
    RegisterTile::allocate(k, atom.a, 16, 16, ptx::Type::f32);
    FAIL() << "an f32 A tile was accepted";
  } catch (const TileError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 16-bit elements; dtype f32 is 32-bit"), std::string::npos) << e.what();
  }
}

TEST(LaneCoords, EmitTheLanePartOfTheFragment) {
  dsl::Kernel k("coords", ptx::Target::sm_80);
  auto s = separate(layout::mma_m16n8k16_f16().c.layout);
  auto lane = k.sreg(dsl::SReg::laneid);
  emit_lane_coords(k, s, lane);
  std::string text = k.ptx();
  // C fragment: col = 2 · (lane % 4), row = lane / 4 (the last leaf needs no mask).
  const char* expected =
      "\tmov.u32 %r0, %laneid;\n"
      "\tand.b32 %r1, %r0, 3;\n"
      "\tshl.b32 %r2, %r1, 1;\n"
      "\tshr.u32 %r3, %r0, 2;\n"
      "\tret;\n";
  EXPECT_NE(text.find(expected), std::string::npos) << text;
}

}  // namespace
}  // namespace warpforge::tile
