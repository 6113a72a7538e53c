// The experimental sm100a GEMM kernel (TMA + tcgen05.mma kind::f16 with the
// accumulator in tensor memory, warp-specialized) on the simulator against
// the fp64 CPU reference: every layout of A and B (K- and MN-major), bf16
// and f16 inputs, f32, bf16 and f16 D (row- and column-major), with and
// without C, M, N, K that are 1, primes and not multiples of the 128 x 128
// x 64 tile, more k-blocks than stages (the ring wraps), batches; that it
// runs only when named, and what it refuses; and that its PTX assembles for
// sm_100a.
#include <gtest/gtest.h>

#include "../../src/ops/gemm/gemm_path.hpp"
#include "../../src/ops/gemm/sm100a_kernel.hpp"
#include "ops/gemm_cases.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

GemmConfig sm100a_config(int stages) {
  return {.tile_m = 128, .tile_n = 128, .tile_k = 64, .stages = stages, .warps_m = 1, .warps_n = 1};
}

std::vector<GemmCase> sm100a_cases() {
  std::vector<GemmCase> all;
  // (M, N, K) equal mod 8, and the pad that makes every leading dimension a
  // multiple of 8 elements (TMA's 16-byte stride rule).
  const std::int64_t shapes[][4] = {
      {37, 45, 53, 3}, {1, 9, 17, 7}, {131, 139, 203, 5}, {21, 29, 13, 3}};
  int i = 0;
  for (int layout = 0; layout < 4; ++layout)
    for (DType ab : {DType::bf16, DType::f16}) {
      const auto& s = shapes[i % 4];
      GemmCase c{s[0], s[1], s[2]};
      c.pad = s[3];
      c.ab = ab;
      c.d = i % 3 == 0 ? DType::f32 : i % 3 == 1 ? DType::bf16 : DType::f16;
      c.a_row = layout & 1;
      c.b_row = layout & 2;
      c.d_row = i % 4 != 3;
      c.with_c = i % 2 == 1;
      c.c_row = i % 4 != 1;
      c.beta = c.with_c ? 1.0f : 0.0f;
      c.config = sm100a_config(2);  // 203 = 4 k-blocks: the 2-slot ring wraps twice
      all.push_back(c);
      ++i;
    }
  // alpha and beta other than 1 and 0, three stages, three batches.
  GemmCase scaled{70, 33, 150};
  scaled.pad = 2;
  scaled.l = 3;
  scaled.d = DType::bf16;
  scaled.with_c = true;
  scaled.alpha = 0.5f;
  scaled.beta = -1.5f;
  scaled.config = sm100a_config(3);
  all.push_back(scaled);
  // The heuristic's configuration.
  GemmCase plain{40, 48, 64};
  all.push_back(plain);
  return all;
}

class GemmSm100aSim : public ::testing::TestWithParam<int> {};

TEST_P(GemmSm100aSim, MatchesTheFp64Reference) {
  check_gemm_case(runtime::Device::sim(), GemmKernel::sm100a, sm100a_cases()[GetParam()]);
}

INSTANTIATE_TEST_SUITE_P(Cases, GemmSm100aSim,
                         ::testing::Range(0, static_cast<int>(sm100a_cases().size())));

TEST(GemmSm100aSimChoice, RunsOnlyWhenNamed) {
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(3);
  auto a = make_matrix(dev, DType::bf16, {0, 40, 48}, rng);
  auto b = make_matrix(dev, DType::bf16, {0, 48, 56}, rng);
  auto d = make_matrix(dev, DType::f32, {0, 40, 56}, rng, true);
  Gemm automatic(a.view, b.view, nullptr, d.view);
  automatic.compile();
  EXPECT_NE(automatic.kernel(), GemmKernel::sm100a);
  Gemm named(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm100a});
  named.compile();
  EXPECT_EQ(named.kernel(), GemmKernel::sm100a);
  EXPECT_EQ(named.config().describe(), "128x128x64 s2 w1x1 c1x1");
  EXPECT_EQ(parse_gemm_kernel("sm100a"), GemmKernel::sm100a);
  EXPECT_EQ(name(GemmKernel::sm100a), "sm100a");
}

TEST(GemmSm100aSimChoice, EveryRefusalIsNamed) {
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(4);
  auto a = make_matrix(dev, DType::bf16, {0, 64, 64}, rng);
  auto b = make_matrix(dev, DType::bf16, {0, 64, 64}, rng);
  auto d = make_matrix(dev, DType::f32, {0, 64, 64}, rng, true);
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
        .cluster_m = 2},
       "cluster 2x1; the sm100a kernel runs without clusters"},
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
  for (const Sm100aSpec& s : {Sm100aSpec{}, Sm100aSpec{.ab = DType::f16,
                                            .d = DType::bf16,
                                            .a_k_major = false,
                                            .b_k_major = false,
                                            .stages = 3,
                                            .has_c = true}}) {
    const auto r = ptx::run_ptxas(build_sm100a_gemm(s).to_ptx(), "sm_100a");
    EXPECT_TRUE(r.ok) << s.name() << ":\n" << r.log;
  }
}

}  // namespace
}  // namespace warpforge::ops::testing
