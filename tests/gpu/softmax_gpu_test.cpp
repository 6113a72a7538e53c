// Softmax on a GPU: the simulator's cases (tests/ops/softmax_checks.hpp),
// then the benchmark's shapes and the longest rows (262144 in a cluster).
#include "gpu_fixture.hpp"
#include "ops/softmax_checks.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::gpu_testing::GpuTest;

class SoftmaxGpu : public GpuTest {
 protected:
  runtime::Device gpu() { return runtime::Device::cuda(0); }
};

TEST_F(SoftmaxGpu, TheSimulatorsCases) {
  std::uint32_t seed = 10;
  for (DType x : {DType::bf16, DType::f16, DType::f32})
    for (DType y : {DType::bf16, DType::f32}) check_softmax(gpu(), {.x = x, .y = y}, seed++);
  check_softmax(gpu(), {.rows = 9, .n = 256}, 20, "warp");
  check_softmax(gpu(), {.rows = 3, .n = 5000}, 21, "cta");
  check_softmax(gpu(), {.rows = 2, .n = 70000}, 22, "cluster");
  check_softmax(gpu(), {.rows = 5, .n = 13}, 30);
  check_softmax(gpu(), {.x = DType::f32, .y = DType::f32, .rows = 4, .n = 1000, .stride = 1024}, 31);
  check_softmax(gpu(), {.rows = 4, .n = 510, .stride = 514}, 32);
  check_softmax_special_rows(gpu());
}

TEST_F(SoftmaxGpu, TheBenchmarksShapesAndTheLongestRows) {
  std::uint32_t seed = 100;
  for (std::int64_t n : {2048, 4096, 8192, 16384}) check_softmax(gpu(), {.rows = 1031, .n = n}, seed++);
  check_softmax(gpu(), {.x = DType::f32, .y = DType::f32, .rows = 5, .n = 262144}, seed++, "cluster");
  check_softmax(gpu(), {.rows = 5, .n = 262144}, seed++, "cluster");
}

}  // namespace
}  // namespace warpforge::ops::testing
