// RMSNorm + quantize on a GPU: the simulator's cases
// (tests/ops/norm_quantize_checks.hpp), then the benchmark's shapes in
// every format, bit for bit against ops::quantize of the norm.
#include <limits>

#include "gpu_fixture.hpp"
#include "ops/norm_quantize_checks.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::gpu_testing::GpuTest;

class NormQuantizeGpu : public GpuTest {
 protected:
  runtime::Device gpu() { return runtime::Device::cuda(0); }
};

constexpr BlockScaledFormat kFormats[] = {kMxfp8E4m3, kMxfp8E5m2, kMxfp4, kNvfp4};

TEST_F(NormQuantizeGpu, TheSimulatorsCases) {
  std::uint32_t seed = 10;
  for (const BlockScaledFormat& f : kFormats)
    for (DType x : {DType::bf16, DType::f32}) check_norm_quantize(gpu(), {.format = f, .x = x}, seed++);
  check_norm_quantize(gpu(), {.format = kNvfp4, .residual = true, .rows = 130, .k = 128}, 20);
  check_norm_quantize(gpu(), {.format = kMxfp4, .weight = false, .rows = 3, .k = 512, .stride = 520}, 21);
  check_norm_quantize(gpu(), {.rows = 2, .k = 40960}, 22, "cluster");
  check_many_rows(gpu());
  check_nvfp4_ties(gpu());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const BlockScaledFormat& f : kFormats)
    check_norm_quantize(gpu(), {.format = f, .rows = 3}, 30, nullptr, [&](HostRows& x) { x.values[5] = nan; });
  for (const BlockScaledFormat& f : kFormats) check_rows_past_the_plain_sum(gpu(), f), check_tiny_blocks(gpu(), f);
}

TEST_F(NormQuantizeGpu, TheBenchmarksShapes) {
  std::uint32_t seed = 100;
  for (const BlockScaledFormat& f : kFormats)
    for (std::int64_t k : {2048, 8192}) {
      check_norm_quantize(gpu(), {.format = f, .rows = 1000, .k = k}, seed++);
      check_norm_quantize(gpu(), {.format = f, .normalize = false, .rows = 1000, .k = k}, seed++);
    }
}

}  // namespace
}  // namespace warpforge::ops::testing
