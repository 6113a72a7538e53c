#include <gtest/gtest.h>

#include "layout_samples.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/complement.hpp"
#include "warpforge/layout/composition.hpp"
#include "warpforge/layout/divide.hpp"
#include "warpforge/layout/inverse.hpp"
#include "warpforge/layout/product.hpp"

namespace warpforge::layout {
namespace {

TEST(LogicalDivide, MatchesTheCuteDocumentationExample) {
  // CUTLASS "CuTe Layout Algebra", Logical Divide: (4,2,3):(2,1,8) / 4:2.
  EXPECT_EQ(to_string(logical_divide(Layout({4, 2, 3}, {2, 1, 8}), Layout(4, 2))),
            "((2,2),(2,3)):((4,1),(2,8))");
}

TEST(LogicalDivide, IsCompositionWithTheTileAndItsComplement) {
  int divided = 0, refused = 0;
  for (const Layout& a : testing::arbitrary_layouts(150, 10)) {
    for (const Layout& tile : testing::injective_layouts(60, 11)) {
      if (tile.cosize() > a.size() || a.size() % tile.cosize() != 0) continue;
      Layout r(1, 0);
      try {
        r = logical_divide(a, tile);
      } catch (const LayoutError&) {
        ++refused;  // A's strides violate the composition's divisibility conditions
        continue;
      }
      Layout tiler = make_layout({tile, complement(tile, a.size())});
      ASSERT_EQ(r.rank(), 2);
      ASSERT_EQ(r.mode(0).size(), tile.size()) << to_string(a) << " / " << to_string(tile);
      ASSERT_GE(r.size(), a.size());
      for (int64_t i = 0; i < r.size(); ++i) {
        // The complement rounds up, so the tiler may reach past A's last
        // mode, where CuTe (and composition here) extend A; compare inside.
        if (tiler(i) >= a.size()) continue;
        ASSERT_EQ(r(i), a(tiler(i))) << to_string(a) << " / " << to_string(tile);
      }
      ++divided;
    }
  }
  EXPECT_GT(divided, 500);
  EXPECT_GT(refused, 0);
}

TEST(ZippedDivide, SplitsTwoDimensionalLayoutsIntoTiles) {
  // Tile (i, j) of a t0 x t1 tiling, element (x, y) inside it, is element
  // (x + t0*i, y + t1*j) of the layout: checked for every divisor pair.
  int tilings = 0;
  for (const Layout& a :
       {Layout({8, 6}, {1, 8}), Layout({8, 6}, {6, 1}), Layout({4, 12}, {24, 2})}) {
    for (int64_t t0 : {1, 2, 4, 8}) {
      for (int64_t t1 : {1, 2, 3, 6}) {
        if (a.mode(0).size() % t0 || a.mode(1).size() % t1) continue;
        Layout z = zipped_divide(a, {Layout(t0, 1), Layout(t1, 1)});
        Layout t = tiled_divide(a, {Layout(t0, 1), Layout(t1, 1)});
        ASSERT_EQ(z.rank(), 2);
        ASSERT_EQ(t.rank(), 3);
        int64_t rows = a.mode(0).size() / t0, cols = a.mode(1).size() / t1;
        for (int64_t x = 0; x < t0; ++x) {
          for (int64_t y = 0; y < t1; ++y) {
            for (int64_t i = 0; i < rows; ++i) {
              for (int64_t j = 0; j < cols; ++j) {
                int64_t expected = a(x + t0 * i, y + t1 * j);
                ASSERT_EQ(z(IntTuple{{x, y}, {i, j}}), expected) << to_string(z);
                ASSERT_EQ(t(IntTuple{{x, y}, i, j}), expected) << to_string(t);
              }
            }
          }
        }
        ++tilings;
      }
    }
  }
  EXPECT_EQ(tilings, 16 + 16 + 12);  // 4 x 12: t0 = 8 does not divide 4
}

TEST(LogicalProduct, RepeatsCompactLayouts) {
  // For compact A, (A, A* o B)(i, j) = A(i) + size(A) * B(j).
  int products = 0;
  for (const Layout& a : testing::compact_layouts(40, 12)) {
    for (const Layout& b : testing::arbitrary_layouts(40, 13)) {
      Layout p = logical_product(a, b);
      ASSERT_EQ(p.size(), a.size() * b.size());
      ASSERT_EQ(p.mode(0), a);
      for (int64_t i = 0; i < a.size(); ++i) {
        for (int64_t j = 0; j < b.size(); ++j) {
          ASSERT_EQ(p(i, j), a(i) + a.size() * b(j)) << to_string(a) << " x " << to_string(b);
        }
      }
      ++products;
    }
  }
  EXPECT_EQ(products, 1600);
  EXPECT_EQ(to_string(logical_product(Layout({2, 2}, {4, 1}), Layout(6, 1))),
            "((2,2),(2,3)):((4,1),(2,8))");
}

TEST(LogicalProduct, IsInjectiveForInjectiveFactors) {
  int products = 0;
  for (const Layout& a : testing::injective_layouts(60, 14)) {
    for (const Layout& b : testing::injective_layouts(20, 15)) {
      Layout p(1, 0);
      try {
        p = logical_product(a, b);
      } catch (const LayoutError&) {
        continue;  // B's strides do not divide the gaps A's complement leaves
      }
      ++products;
      ASSERT_TRUE(is_injective(p)) << to_string(a) << " x " << to_string(b);
      ASSERT_EQ(p.size(), a.size() * b.size());
      ASSERT_EQ(p.mode(0), a);
    }
  }
  EXPECT_GT(products, 600);
}

TEST(TiledProduct, GathersRepeatsByMode) {
  // Each mode is multiplied on its own: mode 0 is 2:1 x 4:1 = (2,4):(1,2), mode
  // 1 is 3:2 x 2:1 = (3,2):(2,1) (its complement within 3*2 is 2:1).
  Layout a = column_major({2, 3});
  Layout z = zipped_product(a, {Layout(4, 1), Layout(2, 1)});
  Layout t = tiled_product(a, {Layout(4, 1), Layout(2, 1)});
  EXPECT_EQ(to_string(z), "((2,3),(4,2)):((1,2),(2,1))");
  EXPECT_EQ(to_string(t), "((2,3),4,2):((1,2),2,1)");
  for (int64_t i = 0; i < 48; ++i) EXPECT_EQ(z(i), t(i));
}

TEST(BlockedAndRakedProduct, PlaceBlocksContiguouslyOrInterleaved) {
  for (const Layout& block : testing::compact_layouts(30, 16)) {
    for (const Layout& repeat : testing::compact_layouts(30, 17)) {
      if (block.rank() != 2 || repeat.rank() != 2) continue;
      Layout blocked = blocked_product(block, repeat);
      Layout raked = raked_product(block, repeat);
      int64_t r0 = repeat.mode(0).size(), r1 = repeat.mode(1).size();
      int64_t b0 = block.mode(0).size(), b1 = block.mode(1).size();
      ASSERT_EQ(blocked.mode(0).size(), b0 * r0);
      ASSERT_EQ(raked.mode(1).size(), b1 * r1);
      ASSERT_TRUE(is_bijective(blocked));
      ASSERT_TRUE(is_bijective(raked));
      for (int64_t x0 = 0; x0 < b0; ++x0) {
        for (int64_t x1 = 0; x1 < b1; ++x1) {
          for (int64_t y0 = 0; y0 < r0; ++y0) {
            for (int64_t y1 = 0; y1 < r1; ++y1) {
              int64_t expected = block(x0, x1) + block.size() * repeat(y0, y1);
              // Blocked: row x0 + b0*y0; raked: row y0 + r0*x0.
              ASSERT_EQ(blocked(x0 + b0 * y0, x1 + b1 * y1), expected);
              ASSERT_EQ(raked(y0 + r0 * x0, y1 + r1 * x1), expected);
            }
          }
        }
      }
    }
  }
}

TEST(TileToShape, RepeatsTheBlockToFill) {
  Layout block({8, 4}, {4, 1});  // a row-major 8x4 atom
  Layout t = tile_to_shape(block, {16, 12});
  EXPECT_EQ(to_string(t), "((8,2),(4,3)):((4,32),(1,64))");
  EXPECT_TRUE(is_bijective(t));
  EXPECT_EQ(t(9, 5), block(1, 1) + 32 * 1 + 64 * 1);
  EXPECT_EQ(tile_to_shape(Layout(4, 1), {8, 3}).size(), 24);
}

TEST(TileToShape, RefusesShapesTheBlockDoesNotDivide) {
  try {
    tile_to_shape(Layout({8, 4}, {4, 1}), {16, 10});
    FAIL() << "10 is not a multiple of 4";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("extent 10 of mode 1"), std::string::npos);
  }
  EXPECT_THROW(tile_to_shape(Layout({8, 4}, {4, 1}), IntTuple(16)), LayoutError);
}

TEST(ByMode, RefusesTilersLongerThanTheLayout) {
  Layout a({4, 4}, {1, 4});
  std::vector<Layout> three{Layout(2, 1), Layout(2, 1), Layout(2, 1)};
  EXPECT_THROW(logical_divide(a, three), LayoutError);
  EXPECT_THROW(zipped_product(a, three), LayoutError);
  EXPECT_THROW(tiled_divide(a, std::vector<Layout>{}), LayoutError);
}

}  // namespace
}  // namespace warpforge::layout
