// The sm80 kernel's shared-memory swizzle keeps ldmatrix free of bank
// conflicts: for every panel width, the eight 16-byte rows of each 8x8
// matrix (8 consecutive panel rows, any chunk column) land in eight distinct
// 16-byte bank groups (32 banks of 4 bytes: groups are address / 16 mod 8),
// and the swizzle is a bijection on every 8-row block, so no two elements
// share a slot.
#include <gtest/gtest.h>

#include <set>

#include "../../src/ops/gemm/sm80_kernel.hpp"

namespace warpforge::ops {
namespace {

TEST(GemmSwizzle, LdmatrixRowsFallInDistinctBankGroups) {
  for (int panel : {16, 32, 64, 128, 256}) {
    const layout::Swizzle swz = sm80_panel_swizzle(panel);
    for (int first_row = 0; first_row < 32; first_row += 8)
      for (int chunk = 0; chunk < panel / 8; ++chunk) {
        std::set<std::int64_t> groups;
        for (int r = first_row; r < first_row + 8; ++r)
          groups.insert(swz(r * panel + chunk * 8) * 2 / 16 % 8);
        EXPECT_EQ(groups.size(), 8u)
            << "panel " << panel << " rows " << first_row << "+ chunk " << chunk;
      }
    std::set<std::int64_t> image;
    for (std::int64_t x = 0; x < 8 * panel; ++x) image.insert(swz(x));
    EXPECT_EQ(image.size(), static_cast<std::size_t>(8 * panel));
    EXPECT_EQ(*image.rbegin(), 8 * panel - 1)
        << "panel " << panel << ": an 8-row block maps onto itself";
    for (std::int64_t x = 0; x < 8 * panel; x += 8)
      EXPECT_EQ(swz(x) % 8, 0) << "16-byte chunks stay whole";
  }
}

}  // namespace
}  // namespace warpforge::ops
