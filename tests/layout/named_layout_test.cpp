#include <gtest/gtest.h>

#include "warpforge/error.hpp"
#include "warpforge/layout/ldmatrix_atom.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/layout/named_layout.hpp"

namespace warpforge::layout {
namespace {

TEST(NamedLayout, MapsNamedPointsBothWays) {
  // Two lanes, each holding a column of a 3 x 2 tile.
  NamedLayout l("columns", {Axis::lane, Axis::value}, Layout({2, 3}, {3, 1}),
                {{Axis::row, 3}, {Axis::col, 2}});
  EXPECT_TRUE(l.is_bijective());
  EXPECT_EQ(l({{Axis::lane, 1}, {Axis::value, 2}}), (AxisPoint{{Axis::row, 2}, {Axis::col, 1}}));
  EXPECT_EQ(l.inverse({{Axis::row, 2}, {Axis::col, 1}}),
            (AxisPoint{{Axis::lane, 1}, {Axis::value, 2}}));
  EXPECT_EQ(l.extent(Axis::lane), 2);
  EXPECT_EQ(l.extent(Axis::row), 3);
  EXPECT_EQ(to_string(l.mode(Axis::value)), "3:1");
  // The inverse layout takes the tile index (row + 3 * col) to the domain
  // index (lane + 2 * value).
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(l.layout()(l.inverse_layout()(i)), i);
}

TEST(NamedLayout, DrawsOwnersAsATable) {
  NamedLayout l("columns", {Axis::lane, Axis::value}, Layout({2, 3}, {3, 1}),
                {{Axis::row, 3}, {Axis::col, 2}});
  EXPECT_EQ(l.to_table(),
            "columns\n"
            " L0V0 L1V0\n"
            " L0V1 L1V1\n"
            " L0V2 L1V2\n");
  // The m16n8k16 accumulator's first row: lanes 0..3 hold two columns each;
  // cells are padded to the widest owner, `L31V3`.
  std::string table = mma_m16n8k16_f16().c.layout.to_table();
  EXPECT_EQ(table.substr(0, table.find('\n', table.find('\n') + 1)),
            "mma.m16n8k16.f16.C\n  L0V0  L0V1  L1V0  L1V1  L2V0  L2V1  L3V0  L3V1");
}

TEST(NamedLayout, ComposesWithAMemoryLayout) {
  // (lane, value) -> offset of the element in a row-major 16 x 16 A tile with a
  // leading dimension of 24 elements.
  Fragment a = mma_m16n8k16_f16().a;
  NamedLayout in_memory = compose(Layout({16, 16}, {24, 1}), a.layout);
  EXPECT_EQ(in_memory.codomain().size(), 1u);
  EXPECT_EQ(in_memory.codomain()[0].axis, Axis::offset);
  for (int64_t lane = 0; lane < 32; ++lane) {
    for (int64_t value = 0; value < 8; ++value) {
      AxisPoint at = a.layout({{Axis::lane, lane}, {Axis::value, value}});
      AxisPoint offset = in_memory({{Axis::lane, lane}, {Axis::value, value}});
      ASSERT_EQ(offset.at(Axis::offset), 24 * at.at(Axis::row) + at.at(Axis::col));
    }
  }
  EXPECT_FALSE(in_memory.is_bijective());  // the padding columns are never read
  try {
    compose(Layout({16, 8}, {8, 1}), a.layout);
    FAIL() << "a 16 x 8 memory tile cannot hold the 16 x 16 A operand";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "has 128 coordinates, but mma.m16n8k16.f16.A addresses a codomain of 256"),
              std::string::npos);
  }
}

TEST(NamedLayout, RefusesBadPointsWithTheAxes) {
  Fragment c = mma_m16n8k16_f16().c;
  try {
    c.layout({{Axis::lane, 3}});
    FAIL() << "value is missing";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("expected exactly {lane, value}"), std::string::npos);
  }
  try {
    c.layout({{Axis::lane, 32}, {Axis::value, 0}});
    FAIL() << "lane 32 is outside a warp";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("lane = 32 is outside [0, 32)"), std::string::npos);
  }
  EXPECT_THROW(c.layout({{Axis::lane, 0}, {Axis::warp, 0}}), LayoutError);
  EXPECT_THROW(c.layout.inverse({{Axis::row, 16}, {Axis::col, 0}}), LayoutError);
  EXPECT_THROW(c.layout.extent(Axis::warp), LayoutError);
  EXPECT_THROW(c.layout.mode(Axis::row), LayoutError);
}

TEST(NamedLayout, RefusesMalformedDefinitions) {
  Layout tv({2, 3}, {3, 1});
  std::vector<AxisExtent> tile{{Axis::row, 3}, {Axis::col, 2}};
  EXPECT_THROW(NamedLayout("x", {Axis::lane}, tv, tile), LayoutError);
  EXPECT_THROW(NamedLayout("x", {Axis::lane, Axis::lane}, tv, tile), LayoutError);
  EXPECT_THROW(NamedLayout("x", {Axis::lane, Axis::value}, tv, {{Axis::row, 3}, {Axis::row, 2}}),
               LayoutError);
  EXPECT_THROW(NamedLayout("x", {Axis::lane, Axis::value}, tv, {{Axis::row, 0}}), LayoutError);
  try {
    NamedLayout("x", {Axis::lane, Axis::value}, tv, {{Axis::row, 5}});
    FAIL() << "offset 5 is outside a codomain of 5 points";
  } catch (const LayoutError& e) {
    EXPECT_NE(
        std::string(e.what()).find("reaches offset 5, outside the codomain {row} of 5 points"),
        std::string::npos);
  }
}

TEST(NamedLayout, RefusesInversesOfNonBijections) {
  // Both lanes hold the same two elements (a broadcast).
  NamedLayout broadcast("broadcast", {Axis::lane, Axis::value}, Layout({2, 2}, {0, 1}),
                        {{Axis::row, 2}, {Axis::col, 1}});
  EXPECT_FALSE(broadcast.is_bijective());
  EXPECT_EQ(broadcast({{Axis::lane, 1}, {Axis::value, 1}}).at(Axis::row), 1);
  try {
    broadcast.inverse({{Axis::row, 1}, {Axis::col, 0}});
    FAIL() << "a broadcast has no inverse";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("broadcast: inverse needs a bijection"),
              std::string::npos);
  }
  EXPECT_THROW(broadcast.inverse_layout(), LayoutError);
  EXPECT_THROW(broadcast.to_table(), LayoutError);
  EXPECT_THROW(ldmatrix(1, false).row_addresses.to_table(), LayoutError);  // one codomain axis
}

}  // namespace
}  // namespace warpforge::layout
