// The experimental sm100a kernels on a GPU. On an sm_100a GPU (none has run
// them yet): the bf16 GEMM over its simulator cases and GemmAmax's kernel,
// named, for MXFP8, MXFP4 and NVFP4 against the CPU reference. On any other
// GPU: both are refused by name and automatic never takes them.
#include <gtest/gtest.h>

#include <random>

#include "gpu/gpu_fixture.hpp"
#include "ops/gemm_amax_test_support.hpp"
#include "ops/gemm_sm100a_cases.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::gpu_testing::GpuTest;

bool blackwell() {
  return runtime::Device::cuda(0).target() == ptx::Target::sm_100a;
}

class Sm100aGpu : public GpuTest {};
class Sm100aGpuGemm : public GpuTest, public ::testing::WithParamInterface<int> {};

TEST_P(Sm100aGpuGemm, MatchesTheFp64Reference) {
  if (IsSkipped()) return;
  if (!blackwell())
    GTEST_SKIP() << "the sm100a GEMM needs an sm_100a GPU; this one is "
                 << ptx::name(runtime::Device::cuda(0).target());
  check_gemm_case(runtime::Device::cuda(0), GemmKernel::sm100a, sm100a_cases()[GetParam()]);
}

INSTANTIATE_TEST_SUITE_P(Cases, Sm100aGpuGemm,
                         ::testing::Range(0, static_cast<int>(sm100a_cases().size())));

TEST_F(Sm100aGpu, GemmAmaxMatchesTheReferenceWhenNamed) {
  if (IsSkipped()) return;
  if (!blackwell())
    GTEST_SKIP() << "the sm100a GemmAmax kernel needs an sm_100a GPU; this one is "
                 << ptx::name(runtime::Device::cuda(0).target());
  std::mt19937 rng(27);
  struct Format {
    DType ab, sf;
    int vec;
  };
  for (const Format& f :
       {Format{DType::e4m3, DType::e8m0, 32}, Format{DType::e2m1, DType::e8m0, 32},
        Format{DType::e2m1, DType::e4m3, 16}}) {
    GemmAmaxCase c;
    c.ab = f.ab, c.sf = f.sf, c.vec = f.vec, c.c = DType::bf16;
    c.tile = std::nullopt;
    c.kernel = GemmAmaxKernel::sm100a;
    c.m = 300, c.n = 264, c.k = 256, c.l = 2;
    auto s = make_gemm_amax(runtime::Device::cuda(0), c, rng);
    GemmAmax automatic(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                       [&] {
                         GemmAmaxOptions o = s.options();
                         o.kernel = GemmAmaxKernel::automatic;
                         return o;
                       }());
    EXPECT_NE(automatic.kernel_name(), "sm100a") << "automatic took the untried kernel on a GPU";
    const auto bad = run_gemm_amax_and_check(s);
    EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches, first "
                             << (bad.empty() ? "" : bad[0]);
  }
}

TEST_F(Sm100aGpu, RefusedByNameOnOtherGpus) {
  if (IsSkipped()) return;
  if (blackwell()) GTEST_SKIP() << "an sm_100a GPU runs them (the tests above)";
  const runtime::Device dev = runtime::Device::cuda(0);
  std::mt19937 rng(28);
  auto a = make_matrix(dev, DType::bf16, {0, 64, 64}, rng);
  auto b = make_matrix(dev, DType::bf16, {0, 64, 64}, rng);
  auto d = make_matrix(dev, DType::f32, {0, 64, 64}, rng, true);
  Gemm g(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm100a});
  std::string reasons;
  for (const auto& r : g.check_support()) reasons += r + "\n";
  EXPECT_NE(
      reasons.find("the sm100a kernel needs sm_100a (compute capability 10.0) or the simulator"),
      std::string::npos)
      << reasons;
  GemmAmaxCase c;
  c.kernel = GemmAmaxKernel::sm100a;
  c.tile = std::nullopt;
  c.m = c.n = 128, c.k = 128;
  auto s = make_gemm_amax(dev, c, rng);
  GemmAmax named(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                 s.options());
  EXPECT_NE(named.describe().find("the sm100a kernel needs sm_100a"), std::string::npos)
      << named.describe();
}

}  // namespace
}  // namespace warpforge::ops::testing
