// SwiGLU on a GPU: the simulator's cases (tests/ops/swiglu_checks.hpp), then
// the benchmark's shapes.
#include "gpu_fixture.hpp"
#include "ops/swiglu_checks.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::gpu_testing::GpuTest;

class SwigluGpu : public GpuTest {
 protected:
  runtime::Device gpu() { return runtime::Device::cuda(0); }
};

TEST_F(SwigluGpu, TheSimulatorsCases) {
  std::uint32_t seed = 10;
  for (DType in : {DType::bf16, DType::f16, DType::f32})
    for (bool interleaved : {false, true}) check_swiglu(gpu(), {.in = in, .out = in, .interleaved = interleaved}, seed++);
  check_swiglu(gpu(), {.in = DType::bf16, .out = DType::f32}, seed++);
  check_swiglu(gpu(), {.rows = 7, .n = 13}, 20, "warp");
  check_swiglu(gpu(), {.interleaved = true, .rows = 3, .n = 1001}, 21);
  check_swiglu(gpu(), {.rows = 2, .n = 40000}, 22, "cta");
  check_swiglu_special_values(gpu());
}

TEST_F(SwigluGpu, TheBenchmarksShapes) {
  std::uint32_t seed = 100;
  for (std::int64_t n : {2048, 4096, 8192, 16384})
    for (bool interleaved : {false, true}) check_swiglu(gpu(), {.interleaved = interleaved, .rows = 1031, .n = n}, seed++);
}

}  // namespace
}  // namespace warpforge::ops::testing
