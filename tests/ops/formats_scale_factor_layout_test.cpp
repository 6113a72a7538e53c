// ops/scale_factor_layout.hpp: the 128x4 tiled layout both ways.
#include <gtest/gtest.h>

#include <set>

#include "warpforge/error.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops {
namespace {

TEST(ScaleFactorLayout, PaddedSizes) {
  const ScaleFactorLayout l{130, 200, 2, 32};  // 7 k-blocks -> RK 2; 130 rows -> RM 2
  EXPECT_EQ(l.k_blocks(), 7);
  EXPECT_EQ(l.row_tiles(), 2);
  EXPECT_EQ(l.k_tiles(), 2);
  EXPECT_EQ(l.bytes(), 2 * 2 * 2 * 512);
  EXPECT_EQ(l.shape6(), (std::vector<std::int64_t>{32, 4, 2, 4, 2, 2}));
  EXPECT_EQ(l.strides6(), (std::vector<std::int64_t>{16, 4, 1024, 1, 512, 2048}));
  const ScaleFactorLayout v16{1, 16, 1, 16};
  EXPECT_EQ(v16.bytes(), 512);
}

TEST(ScaleFactorLayout, OffsetFollowsTheFormula) {
  const ScaleFactorLayout l{300, 1000, 3, 16};  // RM 3, kb 63 -> RK 16
  EXPECT_EQ(l.offset(0, 0, 0), 0);
  EXPECT_EQ(l.offset(0, 1, 0), 1);
  EXPECT_EQ(l.offset(0, 4, 0), 512);
  EXPECT_EQ(l.offset(1, 0, 0), 16);
  EXPECT_EQ(l.offset(32, 0, 0), 4);
  EXPECT_EQ(l.offset(127, 3, 0), 31 * 16 + 3 * 4 + 3);
  EXPECT_EQ(l.offset(128, 0, 0), 16 * 512);
  const std::int64_t r = 257, kb = 45, b = 2;
  EXPECT_EQ(l.offset(r, kb, b), b * 3 * 16 * 512 + (r / 128) * 16 * 512 + (kb / 4) * 512 +
                                    (r % 32) * 16 + ((r / 32) % 4) * 4 + kb % 4);
}

// The 6-D strides describe the same map as the formula, the inverse undoes
// it, every byte is hit once, and the padding is exactly what lies outside.
TEST(ScaleFactorLayout, InverseAndSixDimensionalViewAgree) {
  const ScaleFactorLayout l{130, 200, 2, 32};
  const auto shape = l.shape6();
  const auto strides = l.strides6();
  std::set<std::int64_t> seen;
  std::int64_t padding = 0;
  for (std::int64_t b = 0; b < l.batches; ++b)
    for (std::int64_t r = 0; r < l.row_tiles() * 128; ++r)
      for (std::int64_t kb = 0; kb < l.k_tiles() * 4; ++kb) {
        const std::int64_t off = l.offset(r, kb, b);
        const std::int64_t index[6] = {r % 32, (r / 32) % 4, r / 128, kb % 4, kb / 4, b};
        std::int64_t via_strides = 0;
        for (int i = 0; i < 6; ++i) {
          ASSERT_LT(index[i], shape[static_cast<std::size_t>(i)]);
          via_strides += index[i] * strides[static_cast<std::size_t>(i)];
        }
        ASSERT_EQ(off, via_strides);
        const auto c = l.coordinate(off);
        ASSERT_EQ(c.row, r);
        ASSERT_EQ(c.k_block, kb);
        ASSERT_EQ(c.batch, b);
        EXPECT_EQ(c.padding, r >= 130 || kb >= 7);
        padding += c.padding;
        seen.insert(off);
      }
  EXPECT_EQ(static_cast<std::int64_t>(seen.size()), l.bytes());
  EXPECT_EQ(padding, l.bytes() - 2 * 130 * 7);
}

TEST(ScaleFactorLayout, RefusesCoordinatesOutsideThePaddedLayout) {
  const ScaleFactorLayout l{130, 200, 2, 32};
  try {
    l.offset(256, 0, 0);
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(),
                 "scale-factor coordinate (row 256, k-block 0, batch 0) refused: the padded layout "
                 "holds rows 0..255, k-blocks 0..7, batches 0..1");
  }
  try {
    l.coordinate(4096);
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(), "scale-factor offset 4096 refused: the layout spans bytes 0..4095");
  }
}

}  // namespace
}  // namespace warpforge::ops
