// The experimental sm100a GEMM kernel (TMA + tcgen05.mma kind::f16 with the
// accumulator in tensor memory, warp-specialized) on the simulator against
// the fp64 CPU reference over the cases of gemm_sm100a_cases.hpp; that it
// runs only when named, and what it refuses; and that its PTX assembles for
// sm_100a.
#include <gtest/gtest.h>

#include "../../src/ops/gemm/gemm_path.hpp"
#include "../../src/ops/gemm/sm100a_kernel.hpp"
#include "ops/gemm_sm100a_cases.hpp"
#include "ops/ptxas_record.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

class GemmSm100aSim : public ::testing::TestWithParam<int> {};

TEST_P(GemmSm100aSim, MatchesTheFp64Reference) {
  check_gemm_case(runtime::Device::sim(), GemmKernel::sm100a, sm100a_cases()[GetParam()]);
}

INSTANTIATE_TEST_SUITE_P(Cases, GemmSm100aSim,
                         ::testing::Range(0, static_cast<int>(sm100a_cases().size())));

// A, B and D of a 64 x 64 x 64 bf16 -> f32 problem on the simulator.
struct Operands {
  DeviceMatrix a, b, d;
};
Operands operands(const runtime::Device& dev, std::mt19937& rng) {
  return {make_matrix(dev, DType::bf16, {0, 64, 64}, rng),
          make_matrix(dev, DType::bf16, {0, 64, 64}, rng),
          make_matrix(dev, DType::f32, {0, 64, 64}, rng, true)};
}

TEST(GemmSm100aSimChoice, RunsOnlyWhenNamed) {
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(3);
  auto [a, b, d] = operands(dev, rng);
  Gemm automatic(a.view, b.view, nullptr, d.view);
  automatic.compile();
  EXPECT_NE(automatic.kernel(), GemmKernel::sm100a);
  Gemm named(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm100a});
  named.compile();
  EXPECT_EQ(named.kernel(), GemmKernel::sm100a);
  EXPECT_EQ(named.config().describe(), "128x128x64 s2 w1x1 c1x1");
  // Past one tile of M the heuristic takes a CTA pair.
  auto tall_a = make_matrix(dev, DType::bf16, {0, 200, 64}, rng);
  auto tall_d = make_matrix(dev, DType::f32, {0, 200, 64}, rng, true);
  Gemm paired(tall_a.view, b.view, nullptr, tall_d.view, {.kernel = GemmKernel::sm100a});
  paired.compile();
  EXPECT_EQ(paired.config().describe(), "128x128x64 s2 w1x1 c2x1");
  EXPECT_EQ(parse_gemm_kernel("sm100a"), GemmKernel::sm100a);
  EXPECT_EQ(name(GemmKernel::sm100a), "sm100a");
}

TEST(GemmSm100aSimChoice, EveryRefusalIsNamed) {
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(4);
  auto [a, b, d] = operands(dev, rng);
  const std::pair<GemmConfig, std::string> bad[] = {
      {{.tile_m = 64, .tile_n = 128, .tile_k = 64, .stages = 2, .warps_m = 1, .warps_n = 1},
       "tile 64x128x64; the sm100a kernel runs 128x128x64"},
      {{.tile_m = 128, .tile_n = 128, .tile_k = 64, .stages = 9, .warps_m = 1, .warps_n = 1},
       "stages 9; 1..8"},
      {{.tile_m = 128, .tile_n = 128, .tile_k = 64, .stages = 2, .warps_m = 2, .warps_n = 1},
       "warps 2x1; the sm100a kernel's four warps have fixed roles (w1x1)"},
      {{.tile_m = 128,
        .tile_n = 128,
        .tile_k = 64,
        .stages = 2,
        .warps_m = 1,
        .warps_n = 1,
        .cluster_m = 4},
       "cluster 4x1; the sm100a kernel runs without clusters (1x1, .cta_group::1) or on CTA "
       "pairs along M (2x1, .cta_group::2)"},
      {{.tile_m = 128, .tile_n = 128, .tile_k = 64, .stages = 8, .warps_m = 1, .warps_n = 1},
       "bytes of shared memory; device 'warpforge simulator' allows 232448 per block"},
  };
  for (const auto& [config, needle] : bad) {
    Gemm g(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm100a, .config = config});
    std::string reasons;
    for (const auto& r : g.check_support()) reasons += r + "\n";
    EXPECT_NE(reasons.find(needle), std::string::npos) << config.describe() << ":\n" << reasons;
  }
  auto odd = make_matrix(dev, DType::bf16, {0, 40, 47}, rng);  // lda 47: 94 bytes
  auto b_odd = make_matrix(dev, DType::bf16, {0, 47, 56}, rng);
  auto d_odd = make_matrix(dev, DType::f32, {0, 40, 56}, rng, true);
  Gemm unaligned(odd.view, b_odd.view, nullptr, d_odd.view, {.kernel = GemmKernel::sm100a});
  std::string reasons;
  for (const auto& r : unaligned.check_support()) reasons += r + "\n";
  EXPECT_NE(reasons.find("kernel sm100a refuses: A's leading dimension 47 (94 bytes) is not a "
                         "multiple of 16 bytes"),
            std::string::npos)
      << reasons;
  GemmProblem p;
  p.m = p.n = p.k = 64;
  p.amax = true;
  p.a = p.b = p.d = {.row_major = true, .ld = 64};
  std::string amax;
  for (const auto& r : sm100a_gemm_path().refusals(p, dev)) amax += r + "\n";
  EXPECT_NE(amax.find("amax: the sm100a kernel's epilogue folds no amax"), std::string::npos)
      << amax;
}

TEST(GemmSm100aPtxas, KernelAssemblesForSm100a) {
  if (!ptx::find_ptxas())
    GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  for (const Sm100aSpec& s : {Sm100aSpec{},
                              Sm100aSpec{.ab = DType::f16,
                              .d = DType::bf16,
                              .a_k_major = false,
                              .b_k_major = false,
                              .stages = 3,
                              .has_c = true},
                              Sm100aSpec{.pair = true},
                              Sm100aSpec{.a_k_major = false, .b_k_major = false, .pair = true}}) {
    const auto r = recorded_ptxas(build_sm100a_gemm(s).to_ptx(), "sm_100a");
    EXPECT_TRUE(r.ok) << s.name() << ":\n" << r.log;
  }
}

}  // namespace
}  // namespace warpforge::ops::testing
