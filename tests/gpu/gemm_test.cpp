// ops::gemm on the GPU: the simulator's correctness matrix (tests/ops/
// gemm_cases.hpp) with the sm80 kernel and with the automatic choice, plus
// one large shape each.
#include "gpu_fixture.hpp"
#include "ops/gemm_cases.hpp"

namespace warpforge::ops {
// gtest names the kernel in parameter lists by this.
inline void PrintTo(GemmKernel kernel, std::ostream* out) {
  *out << name(kernel);
}
}  // namespace warpforge::ops

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::gpu_testing::GpuTest;

class GemmGpu : public GpuTest, public ::testing::WithParamInterface<std::tuple<GemmKernel, int>> {
 protected:
  // sm80 runs every case as given. `automatic` drops the cases' (sm80)
  // configurations and lets the dispatch choose: sm90a on an sm_90a GPU where
  // TMA can describe the problem, sm80 elsewhere (the sm90a kernel's own
  // cases are in gemm_sm90a_test.cpp).
  void run(GemmKernel kernel, GemmCase c) {
    if (kernel != GemmKernel::sm80) c.config.reset();
    check_gemm_case(runtime::Device::cuda(0), kernel, c);
  }
};

TEST_P(GemmGpu, MatchesTheFp64Reference) {
  if (IsSkipped()) return;
  const auto [kernel, index] = GetParam();
  run(kernel, gemm_correctness_cases()[index]);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GemmGpu,
    ::testing::Combine(::testing::Values(GemmKernel::sm80, GemmKernel::automatic),
                       ::testing::Range(0, static_cast<int>(gemm_correctness_cases().size()))),
    [](const auto& info) {
      return std::string(name(std::get<0>(info.param))) + "_" +
             std::to_string(std::get<1>(info.param));
    });

class GemmGpuLarge : public GemmGpu {};

TEST_P(GemmGpuLarge, LargeShapeMatchesTheFp64Reference) {
  if (IsSkipped()) return;
  const GemmKernel kernel = std::get<0>(GetParam());
  // Large enough for the biggest tiles and many k-tiles; the fp64 reference
  // (about 2·10^9 multiply-adds) takes a few seconds.
  GemmCase c{1024 + 19, 1024 + 37, 1024 + 5};
  c.d = DType::bf16;
  c.b_row = false;
  run(kernel, c);
}

INSTANTIATE_TEST_SUITE_P(Kernels, GemmGpuLarge,
                         ::testing::Combine(::testing::Values(GemmKernel::sm80, GemmKernel::automatic),
                                            ::testing::Values(0)),
                         [](const auto& info) {
                           return std::string(name(std::get<0>(info.param)));
                         });

}  // namespace
}  // namespace warpforge::ops::testing
