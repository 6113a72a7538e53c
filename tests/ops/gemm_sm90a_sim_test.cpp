// The sm90a GEMM kernel (TMA + mbarrier pipeline + wgmma, warp-specialized,
// persistent) on the simulator against the fp64
// CPU reference, over the cases of gemm_sm90a_cases.hpp; the simulator's few
// SMs make each CTA walk several tiles, so the pipeline's phases wrap.
#include <gtest/gtest.h>

#include "ops/gemm_sm90a_cases.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

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

// The tensor maps carry the operands' addresses and are kept between runs:
// a run on other buffers (of the same description) must use new ones.
TEST(GemmSm90aSimChoice, ExecuteOnOtherBuffersUsesTheirAddresses) {
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(std::random_device{}());
  Gemm g(make_matrix(dev, DType::bf16, {0, 40, 48}, rng).view, make_matrix(dev, DType::bf16, {0, 48, 56}, rng).view,
         nullptr, make_matrix(dev, DType::f32, {0, 40, 56}, rng, true).view, {.kernel = GemmKernel::sm90a});
  g.compile();
  std::vector<DeviceMatrix> alive;  // every run's buffers stay allocated, so each run has new addresses
  alive.reserve(9);
  for (int run = 0; run < 3; ++run) {
    const auto& a = alive.emplace_back(make_matrix(dev, DType::bf16, {0, 40, 48}, rng));
    const auto& b = alive.emplace_back(make_matrix(dev, DType::bf16, {0, 48, 56}, rng));
    const auto& d = alive.emplace_back(make_matrix(dev, DType::f32, {0, 40, 56}, rng, true));
    g.execute(a.view, b.view, nullptr, d.view);
    EXPECT_LE(max_relative_error(HostTensor::download(d.view), gemm_reference(a.host, b.host, nullptr, 1.0, 0.0), 1.0),
              1e-4)
        << "run " << run;
  }
}

TEST(GemmSm90aSimChoice, EveryConfigurationRuleIsNamed) {
  runtime::Device dev = runtime::Device::sim();
  std::mt19937 rng(std::random_device{}());
  auto a = make_matrix(dev, DType::bf16, {0, 64, 64}, rng);
  auto b = make_matrix(dev, DType::bf16, {0, 64, 64}, rng, false);
  auto d = make_matrix(dev, DType::f32, {0, 64, 64}, rng, true);
  const std::pair<GemmConfig, std::string> bad[] = {
      {{.tile_m = 96, .tile_n = 64, .tile_k = 64, .stages = 2}, "tile_m 96; the sm90a kernel has 1 or 2 consumer warpgroups"},
      {{.tile_m = 64, .tile_n = 80, .tile_k = 64, .stages = 2}, "tile_n 80; a multiple of 32 in 64..256"},
      {{.tile_m = 64, .tile_n = 288, .tile_k = 64, .stages = 2}, "tile_n 288; a multiple of 32 in 64..256"},
      {{.tile_m = 64, .tile_n = 64, .tile_k = 32, .stages = 2}, "tile_k 32; the sm90a kernel stages K 64 at a time"},
      {{.tile_m = 64, .tile_n = 64, .tile_k = 64, .stages = 9}, "stages 9; 2..8"},
      {{.tile_m = 64, .tile_n = 64, .tile_k = 64, .stages = 2, .cluster_m = 2, .cluster_n = 2},
       "cluster 2x2; the sm90a kernel takes 1x1, 2x1 (pairs along M sharing B) or 1x2 (along N sharing A)"},
      {{.tile_m = 64, .tile_n = 64, .tile_k = 64, .stages = 2, .cluster_m = 2},
       "cluster 2x1 with tile_n 64: N-major B is multicast in boxes of 64 columns, as many to each CTA of the pair; "
       "tile_n 128 or 256 is needed"},
      {{.tile_m = 128, .tile_n = 192, .tile_k = 64, .stages = 2, .cluster_m = 2},
       "cluster 2x1 with tile_n 192: N-major B is multicast in boxes of 64 columns, as many to each CTA"},
      {{.tile_m = 128, .tile_n = 96, .tile_k = 64, .stages = 2, .cluster_m = 2},
       "cluster 2x1 with tile_n 96: N-major B is multicast in boxes of 32 columns, as many to each CTA"},
      {{.tile_m = 128, .tile_n = 256, .tile_k = 64, .stages = 5}, "bytes of shared memory; device 'warpforge simulator' allows 232448"},
  };
  for (const auto& [config, needle] : bad) {
    Gemm g(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm90a, .config = config});
    std::string reasons;
    for (const auto& r : g.check_support()) reasons += r + "\n";
    EXPECT_NE(reasons.find(needle), std::string::npos) << config.describe() << ":\n" << reasons;
  }
  auto a_col = make_matrix(dev, DType::bf16, {0, 64, 64, false}, rng);
  Gemm g(a_col.view, b.view, nullptr, d.view,
         {.kernel = GemmKernel::sm90a, .config = GemmConfig{.tile_m = 64, .tile_n = 64, .tile_k = 64, .stages = 2,
                                                             .cluster_n = 2}});
  std::string reasons;
  for (const auto& r : g.check_support()) reasons += r + "\n";
  EXPECT_NE(reasons.find("cluster 1x2 with tile_m 64: M-major A is multicast in 64-row boxes, one per CTA of the pair; "
                         "tile_m 128 is needed"),
            std::string::npos)
      << reasons;
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
