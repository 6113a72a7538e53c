// count_bank_conflicts against hand-counted warp accesses.
#include <gtest/gtest.h>

#include "warpforge/error.hpp"
#include "warpforge/layout/bank_conflicts.hpp"

namespace warpforge::layout {
namespace {

std::vector<int64_t> strided(int64_t lanes, int64_t stride) {
  std::vector<int64_t> out;
  for (int64_t t = 0; t < lanes; ++t) out.push_back(t * stride);
  return out;
}

TEST(BankConflicts, ConsecutiveWordsTakeOneWavefront) {
  const BankConflicts c = count_bank_conflicts(strided(32, 4), 4);
  EXPECT_EQ(c.phases, 1);
  EXPECT_EQ(c.wavefronts, 1);
  EXPECT_EQ(c.worst_way, 1);
  EXPECT_EQ(c.extra_wavefronts(), 0);
}

TEST(BankConflicts, A128ByteStrideIs32Way) {
  // Every lane in bank 0, each a different word.
  const BankConflicts c = count_bank_conflicts(strided(32, 128), 4);
  EXPECT_EQ(c.wavefronts, 32);
  EXPECT_EQ(c.worst_way, 32);
}

TEST(BankConflicts, OneWordReadByAllIsABroadcast) {
  EXPECT_EQ(count_bank_conflicts(std::vector<int64_t>(32, 64), 4).wavefronts, 1);
}

TEST(BankConflicts, WideAccessesSplitIntoPhases) {
  // 8 bytes: 16 lanes per phase, 2 phases, each conflict-free.
  const BankConflicts eight = count_bank_conflicts(strided(32, 8), 8);
  EXPECT_EQ(eight.phases, 2);
  EXPECT_EQ(eight.wavefronts, 2);
  // 16 bytes at a 32-byte stride: each phase of 8 lanes covers 256 bytes, so
  // two lanes share each group of four banks: 2-way, 4 phases.
  const BankConflicts sixteen = count_bank_conflicts(strided(32, 32), 16);
  EXPECT_EQ(sixteen.phases, 4);
  EXPECT_EQ(sixteen.worst_way, 2);
  EXPECT_EQ(sixteen.wavefronts, 8);
}

TEST(BankConflicts, TwoByteAccessesShareWords) {
  // Lanes 2i and 2i+1 read the two halves of word i: one wavefront.
  EXPECT_EQ(count_bank_conflicts(strided(32, 2), 2).wavefronts, 1);
}

TEST(BankConflicts, RefusesBadWidthsAddressesAndWarps) {
  EXPECT_THROW(count_bank_conflicts(strided(32, 4), 3), LayoutError);
  EXPECT_THROW(count_bank_conflicts({0, 6}, 4), LayoutError);
  EXPECT_THROW(count_bank_conflicts(strided(33, 4), 4), LayoutError);
  try {
    count_bank_conflicts({0, 6}, 4);
  } catch (const LayoutError& e) {
    EXPECT_STREQ(
        e.what(),
        "count_bank_conflicts: thread 1 accesses 4 bytes at 6, which is not a non-negative "
        "multiple of the access width");
  }
}

}  // namespace
}  // namespace warpforge::layout
