// The documented examples on the CPU simulator: what CI (no GPU) checks.
#include <gtest/gtest.h>

#include "kernels/runners.hpp"

namespace warpforge {
namespace {

TEST(ExamplesOnSim, MmaDemoGivesRowsNineToTwentyFourExactly) {
  auto r = examples::run_mma_demo(runtime::Device::sim());
  EXPECT_TRUE(r.passed) << r.detail;
  ASSERT_EQ(r.output.size(), 16u * 8u);
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col) EXPECT_EQ(r.output[row * 8 + col], float(row + 9)) << row << "," << col;
}

TEST(ExamplesOnSim, Bf16GemmPassesAllFiveCases) {
  std::mt19937 rng(std::random_device{}());
  auto results = examples::run_bf16_gemm(runtime::Device::sim(), rng);
  ASSERT_EQ(results.size(), 5u);
  for (const auto& r : results) EXPECT_TRUE(r.passed) << r.name << ": " << r.detail;
}

TEST(ExamplesOnSim, WarpGemmOneAtom) {
  std::mt19937 rng(std::random_device{}());
  auto r = examples::run_warp_gemm_16x8x16(runtime::Device::sim(), rng);
  EXPECT_TRUE(r.passed) << r.detail;
}

TEST(ExamplesOnSim, WarpGemmNestWithBetaOneThroughSharedMemory) {
  std::mt19937 rng(std::random_device{}());
  auto r = examples::run_warp_gemm_64x32x32(runtime::Device::sim(), rng);
  EXPECT_TRUE(r.passed) << r.detail;
}

TEST(ExamplesOnSim, StreamReadFoldsEveryVectorOnce) {
  std::mt19937 rng(std::random_device{}());
  auto r = examples::run_stream_read(runtime::Device::sim(), rng);
  EXPECT_TRUE(r.passed) << r.detail;
}

}  // namespace
}  // namespace warpforge
