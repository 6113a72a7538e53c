// ops::gemm on the GPU: the simulator's correctness matrix (tests/ops/
// gemm_cases.hpp) for each kernel of this build (sm80, and sm90a where the
// build has it and the GPU runs it), plus one large shape per kernel.
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
  // sm80 runs every case on every GPU warpforge supports. Another kernel
  // (sm90a) skips, saying why, where it is not in this build, does not run
  // on this GPU, or refuses the case (a shape TMA cannot describe).
  void run(GemmKernel kernel, GemmCase c) {
    if (kernel == GemmKernel::sm80) return check_gemm_case(runtime::Device::cuda(0), kernel, c);
    c.config.reset();  // the cases' configurations are sm80 ones
    try {
      check_gemm_case(runtime::Device::cuda(0), kernel, c);
    } catch (const OpsError& e) {
      GTEST_SKIP() << "kernel " << name(kernel) << " does not run " << c.describe() << ": "
                   << e.what();
    }
  }
};

TEST_P(GemmGpu, MatchesTheFp64Reference) {
  if (IsSkipped()) return;
  const auto [kernel, index] = GetParam();
  run(kernel, gemm_correctness_cases()[index]);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GemmGpu,
    ::testing::Combine(::testing::Values(GemmKernel::sm80, GemmKernel::sm90a),
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
                         ::testing::Combine(::testing::Values(GemmKernel::sm80, GemmKernel::sm90a),
                                            ::testing::Values(0)),
                         [](const auto& info) {
                           return std::string(name(std::get<0>(info.param)));
                         });

}  // namespace
}  // namespace warpforge::ops::testing
