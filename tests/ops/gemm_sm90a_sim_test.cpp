// The sm90a GEMM kernel (TMA + mbarrier pipeline + wgmma, warp-specialized,
// persistent, optional 2-CTA multicast) on the simulator against the fp64
// CPU reference. Shapes are chosen so that one pad makes every leading
// dimension a multiple of 8 elements (TMA's 16-byte stride rule) while M, N
// and K stay 1, primes or non-multiples of every tile; the simulator's few
// SMs make each CTA walk several tiles, so the pipeline's phases wrap.
#include <gtest/gtest.h>

#include "ops/gemm_cases.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

GemmConfig sm90a_config(int tile_m, int tile_n, int stages) {
  return {.tile_m = tile_m, .tile_n = tile_n, .tile_k = 64, .stages = stages, .warps_m = tile_m / 64, .warps_n = 1};
}

std::vector<GemmCase> sm90a_cases() {
  std::vector<GemmCase> all;
  // (M, N, K) all equal mod 8, and the pad that rounds them up to a multiple of 8.
  const std::int64_t shapes[][4] = {{37, 45, 53, 3}, {1, 9, 17, 7}, {67, 131, 75, 5}, {21, 29, 13, 3}};
  const GemmConfig small = sm90a_config(64, 64, 2);
  int i = 0;
  for (int layout = 0; layout < 4; ++layout)
    for (DType ab : {DType::bf16, DType::f16})
      for (DType d : {DType::f32, DType::bf16}) {
        const auto& s = shapes[i % 4];
        GemmCase c{s[0], s[1], s[2]};
        c.pad = s[3];
        c.ab = ab;
        c.d = i % 3 == 2 ? DType::f16 : d;
        c.a_row = layout & 1;
        c.b_row = layout & 2;
        c.with_c = i % 2 == 1;
        c.c_row = i % 4 != 1;
        c.beta = c.with_c ? 1.0f : 0.0f;
        c.config = small;
        all.push_back(c);
        ++i;
      }
  GemmCase ones{1, 1, 1};
  ones.pad = 7;
  ones.config = small;
  all.push_back(ones);
  // alpha and beta other than 1 and 0.
  GemmCase scaled{29, 37, 45};
  scaled.pad = 3;
  scaled.with_c = true;
  scaled.alpha = 0.5f;
  scaled.beta = -1.5f;
  scaled.config = small;
  all.push_back(scaled);
  // Batches (own operands; the batch is the tensor maps' third dimension).
  GemmCase batched{21, 29, 13, 3};
  batched.pad = 3;
  batched.with_c = true;
  batched.beta = 1.0f;
  batched.d = DType::bf16;
  batched.config = small;
  all.push_back(batched);
  // The big configurations: two consumer warpgroups, N tiles of 64 to 256,
  // each major-ness; K past several stages.
  int j = 0;
  for (const GemmConfig& config : {sm90a_config(128, 128, 3), sm90a_config(128, 256, 2), sm90a_config(128, 128, 4),
                                   sm90a_config(64, 192, 3), sm90a_config(128, 64, 6), sm90a_config(64, 128, 2)}) {
    GemmCase c{131, 139, 267};  // all 3 mod 8
    c.pad = 5;
    c.config = config;
    c.a_row = j % 2 == 0;
    c.b_row = j % 3 != 0;
    c.d = j % 2 ? DType::bf16 : DType::f32;
    all.push_back(c);
    ++j;
  }
  return all;
}

class GemmSm90aSim : public ::testing::TestWithParam<int> {};

TEST_P(GemmSm90aSim, MatchesTheFp64Reference) {
  check_gemm_case(runtime::Device::sim(), GemmKernel::sm90a, sm90a_cases()[GetParam()]);
}

INSTANTIATE_TEST_SUITE_P(Cases, GemmSm90aSim, ::testing::Range(0, static_cast<int>(sm90a_cases().size())));

TEST(GemmSm90aSimChoice, AutomaticTakesSm90aWhereTmaCanDescribeTheProblemElseSm80) {
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(std::random_device{}());
  auto a = make_matrix(dev, DType::bf16, {0, 40, 48}, rng);
  auto b = make_matrix(dev, DType::bf16, {0, 48, 56}, rng);
  auto d = make_matrix(dev, DType::f32, {0, 40, 56}, rng, true);
  Gemm aligned(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm90a});
  EXPECT_TRUE(aligned.check_support().empty());
  auto odd = make_matrix(dev, DType::bf16, {0, 40, 47}, rng);  // lda 47: 94 bytes
  auto b_odd = make_matrix(dev, DType::bf16, {0, 47, 56}, rng);
  Gemm unaligned(odd.view, b_odd.view, nullptr, d.view, {.kernel = GemmKernel::sm90a});
  std::string reasons;
  for (const auto& r : unaligned.check_support()) reasons += r + "\n";
  EXPECT_NE(reasons.find("A's leading dimension 47 (94 bytes) is not a multiple of 16 bytes"), std::string::npos)
      << reasons;
}

TEST(GemmSm90aSimChoice, EveryConfigurationRuleIsNamed) {
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(std::random_device{}());
  auto a = make_matrix(dev, DType::bf16, {0, 64, 64}, rng);
  auto b = make_matrix(dev, DType::bf16, {0, 64, 64}, rng, false);
  auto d = make_matrix(dev, DType::f32, {0, 64, 64}, rng, true);
  const std::pair<GemmConfig, std::string> bad[] = {
      {{.tile_m = 96, .tile_n = 64, .tile_k = 64, .stages = 2}, "tile_m 96; the sm90a kernel has 1 or 2 consumer warpgroups"},
      {{.tile_m = 64, .tile_n = 96, .tile_k = 64, .stages = 2}, "tile_n 96; a multiple of 64 in 64..256"},
      {{.tile_m = 64, .tile_n = 64, .tile_k = 32, .stages = 2}, "tile_k 32; the sm90a kernel stages K 64 at a time"},
      {{.tile_m = 64, .tile_n = 64, .tile_k = 64, .stages = 9}, "stages 9; 2..8"},
      {{.tile_m = 64, .tile_n = 64, .tile_k = 64, .stages = 2, .cluster_m = 2}, "cluster 2x1; the sm90a kernel runs without clusters"},
      {{.tile_m = 128, .tile_n = 256, .tile_k = 64, .stages = 4}, "bytes of shared memory; device 'warpforge simulator' allows 232448"},
  };
  for (const auto& [config, needle] : bad) {
    Gemm g(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm90a, .config = config});
    std::string reasons;
    for (const auto& r : g.check_support()) reasons += r + "\n";
    EXPECT_NE(reasons.find(needle), std::string::npos) << config.describe() << ":\n" << reasons;
  }
}

TEST(GemmSm90aSimChoice, RefusesWhatTmaCannotDescribe) {
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(std::random_device{}());
  auto a = make_matrix(dev, DType::bf16, {0, 40, 48}, rng);
  auto b = make_matrix(dev, DType::bf16, {0, 48, 56}, rng);
  auto d_col = make_matrix(dev, DType::f32, {0, 40, 56, false}, rng, true);
  auto shifted = make_matrix(dev, DType::bf16, {0, 40, 48, true, 0, 8}, rng);  // 8 bytes past alignment
  Gemm col(a.view, b.view, nullptr, d_col.view, {.kernel = GemmKernel::sm90a});
  Gemm misaligned(shifted.view, b.view, nullptr, make_matrix(dev, DType::f32, {0, 40, 56}, rng, true).view,
                  {.kernel = GemmKernel::sm90a});
  std::string reasons;
  for (const auto& r : col.check_support()) reasons += r + "\n";
  for (const auto& r : misaligned.check_support()) reasons += r + "\n";
  EXPECT_NE(reasons.find("D is column-major; the sm90a kernel's TMA-store epilogue writes row-major D"),
            std::string::npos) << reasons;
  EXPECT_NE(reasons.find("A's address is 8-byte aligned; the sm90a kernel's TMA copies need 16"), std::string::npos)
      << reasons;
}

}  // namespace
}  // namespace warpforge::ops::testing
