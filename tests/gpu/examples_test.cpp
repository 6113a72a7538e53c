// The documented examples on the GPU, checked against their references.
#include "gpu_fixture.hpp"
#include "kernels/runners.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

class GpuExamples : public GpuTest {};

TEST_F(GpuExamples, MmaDemoGivesRowsNineToTwentyFourExactly) {
  auto r = examples::run_mma_demo(Device::cuda(0));
  EXPECT_TRUE(r.passed) << r.detail;
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col) EXPECT_EQ(r.output[row * 8 + col], float(row + 9)) << row << "," << col;
}

TEST_F(GpuExamples, Bf16GemmPassesAllFiveCases) {
  std::mt19937 rng(std::random_device{}());
  auto results = examples::run_bf16_gemm(Device::cuda(0), rng);
  ASSERT_EQ(results.size(), 5u);
  for (const auto& r : results) EXPECT_TRUE(r.passed) << r.name << ": " << r.detail;
}

TEST_F(GpuExamples, WarpGemmTilePrimitivesMatchTheReference) {
  std::mt19937 rng(std::random_device{}());
  auto small = examples::run_warp_gemm_16x8x16(Device::cuda(0), rng);
  EXPECT_TRUE(small.passed) << small.detail;
  auto nest = examples::run_warp_gemm_64x32x32(Device::cuda(0), rng);
  EXPECT_TRUE(nest.passed) << nest.detail;
}

TEST_F(GpuExamples, StreamReadFoldsEveryVectorOnce) {
  std::mt19937 rng(std::random_device{}());
  auto r = examples::run_stream_read(Device::cuda(0), rng);
  EXPECT_TRUE(r.passed) << r.detail;
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
