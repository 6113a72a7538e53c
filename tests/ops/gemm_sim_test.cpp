// ops::gemm (the sm80 kernel) on the simulator against the fp64 CPU
// reference, over the correctness matrix of gemm_cases.hpp.
#include <gtest/gtest.h>

#include "ops/gemm_cases.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

class GemmSim : public ::testing::TestWithParam<int> {};

TEST_P(GemmSim, MatchesTheFp64Reference) {
  check_gemm_case(runtime::Device::sim(), GemmKernel::sm80, gemm_correctness_cases()[GetParam()]);
}

INSTANTIATE_TEST_SUITE_P(Cases, GemmSim,
                         ::testing::Range(0, static_cast<int>(gemm_correctness_cases().size())));

TEST(GemmSimBeta, CIsNotReadWhenBetaIsZero) {
  std::mt19937 rng(std::random_device{}());
  runtime::Device dev = runtime::Device::sim();
  auto a = make_matrix(dev, DType::bf16, {0, 17, 19}, rng);
  auto b = make_matrix(dev, DType::bf16, {0, 19, 23}, rng);
  auto c = make_matrix(dev, DType::f32, {0, 17, 23}, rng, true);  // NaN: reading it would show
  auto d = make_matrix(dev, DType::f32, {0, 17, 23}, rng, true);
  gemm(a.view, b.view, &c.view, d.view, {.alpha = 2.0f, .beta = 0.0f});
  auto want = gemm_reference(a.host, b.host, nullptr, 2.0, 0.0);
  EXPECT_LE(max_relative_error(HostTensor::download(d.view), want, 1.0), 1e-4);
}

TEST(GemmSimDeterminism, SameInputsGiveTheSameBits) {
  GemmCase c{45, 38, 100};
  std::mt19937 first(7), second(7);
  const runtime::Device dev = runtime::Device::sim();
  HostTensor x = run_gemm_case(dev, GemmKernel::sm80, c, first),
             y = run_gemm_case(dev, GemmKernel::sm80, c, second);
  EXPECT_EQ(x.bytes, y.bytes);
}

}  // namespace
}  // namespace warpforge::ops::testing
