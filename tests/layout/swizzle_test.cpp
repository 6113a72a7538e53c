#include <gtest/gtest.h>

#include <set>

#include "warpforge/error.hpp"
#include "warpforge/layout/composition.hpp"
#include "warpforge/layout/swizzle.hpp"

namespace warpforge::layout {
namespace {

TEST(Swizzle, MatchesHandComputedExamples) {
  Swizzle s(3, 4, 3);  // 128-byte swizzle on byte addresses
  // Row r of 128 bytes, 16-byte chunk c lands at chunk c ^ (r % 8).
  EXPECT_EQ(s(0), 0);
  EXPECT_EQ(s(128), 128 + 16);                               // row 1, chunk 0 -> chunk 1
  EXPECT_EQ(s(3 * 128 + 5 * 16), 3 * 128 + 6 * 16);          // row 3, chunk 5 -> 6
  EXPECT_EQ(s(3 * 128 + 5 * 16 + 7), 3 * 128 + 6 * 16 + 7);  // bytes inside a chunk stay
  EXPECT_EQ(s(9 * 128), 9 * 128 + 16);                       // rows repeat every 8
  EXPECT_EQ(Swizzle(1, 4, 3)(128 + 16), 128);                // 32B: chunk 1 of row 1 -> chunk 0
  EXPECT_EQ(Swizzle(2, 4, 3)(3 * 128 + 16), 3 * 128 + 32);   // 64B: chunk 1 ^ 3 = 2
  EXPECT_EQ(Swizzle()(12345), 12345);
  EXPECT_EQ(to_string(s), "Swizzle<3,4,3>");
}

TEST(Swizzle, IsABijectionOnEveryAlignedBlock) {
  int checked = 0;
  for (int bits = 0; bits <= 3; ++bits) {
    for (int base = 0; base <= 4; ++base) {
      for (int shift = bits; shift <= bits + 3; ++shift) {
        Swizzle s(bits, base, shift);
        int64_t block = int64_t{1} << (bits + base + shift);
        for (int64_t start : {int64_t{0}, 3 * block}) {
          std::set<int64_t> image;
          for (int64_t x = start; x < start + block; ++x) {
            int64_t y = s(x);
            ASSERT_GE(y, start);
            ASSERT_LT(y, start + block);
            ASSERT_EQ(s(y), x) << to_string(s) << " is an involution";
            image.insert(y);
          }
          ASSERT_EQ(static_cast<int64_t>(image.size()), block) << to_string(s);
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 4 * 5 * 4);
}

TEST(Swizzle, RefusesOverlappingBitRanges) {
  try {
    Swizzle(3, 4, 2);
    FAIL() << "shift 2 < bits 3 overlaps";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("Swizzle<3,4,2>"), std::string::npos);
  }
  EXPECT_THROW(Swizzle(-1, 0, 0), LayoutError);
  EXPECT_THROW(Swizzle(1, -1, 3), LayoutError);
}

TEST(SmemSwizzle, ModesInElementUnits) {
  // PTX ISA 9.7.15.5.1.2.1.3: Swizzle<B,4,3> on bytes, B = 0, 1, 2, 3.
  EXPECT_EQ(smem_swizzle(SmemSwizzle::none, 1), Swizzle(0, 4, 3));
  EXPECT_EQ(smem_swizzle(SmemSwizzle::b32, 1), Swizzle(1, 4, 3));
  EXPECT_EQ(smem_swizzle(SmemSwizzle::b64, 1), Swizzle(2, 4, 3));
  EXPECT_EQ(smem_swizzle(SmemSwizzle::b128, 1), Swizzle(3, 4, 3));
  EXPECT_EQ(smem_swizzle(SmemSwizzle::b128, 2), Swizzle(3, 3, 3));
  EXPECT_EQ(smem_swizzle(SmemSwizzle::b128, 4), Swizzle(3, 2, 3));
  EXPECT_EQ(swizzle_bytes(SmemSwizzle::b64), 64);
  // The element form agrees with the byte form on every element of 4 KiB.
  for (SmemSwizzle mode :
       {SmemSwizzle::none, SmemSwizzle::b32, SmemSwizzle::b64, SmemSwizzle::b128}) {
    for (int bytes : {1, 2, 4, 8, 16}) {
      Swizzle on_bytes = smem_swizzle(mode, 1), on_elements = smem_swizzle(mode, bytes);
      for (int64_t e = 0; e < 4096 / bytes; ++e) {
        ASSERT_EQ(on_elements(e) * bytes, on_bytes(e * bytes)) << to_string(mode) << " " << bytes;
      }
    }
  }
}

TEST(SmemSwizzle, RefusesOddElementSizes) {
  try {
    smem_swizzle(SmemSwizzle::b64, 3);
    FAIL() << "3-byte elements";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("element size 3 bytes; the 64B swizzle"),
              std::string::npos);
  }
  EXPECT_THROW(smem_swizzle(SmemSwizzle::none, 32), LayoutError);
}

TEST(SwizzledLayout, AppliesTheSwizzleAfterTheLayout) {
  // An 8 x 64 row-major bf16 tile with the 128-byte swizzle.
  SwizzledLayout tile(smem_swizzle(SmemSwizzle::b128, 2), Layout({8, 64}, {64, 1}));
  EXPECT_EQ(to_string(tile), "Swizzle<3,3,3> o (8,64):(64,1)");
  EXPECT_EQ(tile(3, 40), 3 * 64 + ((40 / 8) ^ 3) * 8);
  EXPECT_EQ(tile(IntTuple{3, 41}), 3 * 64 + ((41 / 8) ^ 3) * 8 + 1);
  // Each row is a permutation of its own 64 elements.
  for (int64_t r = 0; r < 8; ++r) {
    std::set<int64_t> row;
    for (int64_t c = 0; c < 64; ++c) row.insert(tile(r, c) - 64 * r);
    EXPECT_EQ(row.size(), 64u);
    EXPECT_EQ(*row.rbegin(), 63);
  }
  // Composing with a tiler keeps the swizzle outermost.
  SwizzledLayout column = composition(tile, Layout(8, 1));  // 1-D indices 0..7: column 0
  for (int64_t r = 0; r < 8; ++r) EXPECT_EQ(column(r), tile(r, 0));
  SwizzledLayout tiled = tile_to_shape(tile, {16, 128});
  EXPECT_EQ(tiled.size(), 16 * 128);
  // Row 9 is row 1 of the second block down (+512), column 70 is column 6 of
  // the second block across (+1024); every block is swizzled alike.
  EXPECT_EQ(tiled(9, 70), 512 + 1024 + tile(1, 6));
}

}  // namespace
}  // namespace warpforge::layout
