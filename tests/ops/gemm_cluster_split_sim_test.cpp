// Split-K over a cluster on the sm90a kernel (GemmConfig::split_k), on
// simulated devices of a chosen SM count: 2, 3 and 4 CTAs along K, ranks of
// uneven k-ranges, one k-block per rank, clusters that walk several tiles
// (the sum slots reused tile after tile), batches, both consumer counts,
// M-major and N-major operands, C and beta; against the fp64 reference,
// and bit-identical repeats. Then the refusals, each naming its rule.
#include <gtest/gtest.h>

#include "ops/gemm_sm90a_cases.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

runtime::Device sim_with_sms(int sms) { return runtime::Device(sim::make_backend({.sm_count = sms})); }

GemmConfig split(GemmConfig c, int ctas) {
  c.split_k = ctas;
  return c;
}

struct SplitCase {
  int sms;
  GemmCase gemm;
};

std::vector<SplitCase> split_cases() {
  std::vector<SplitCase> all;
  auto add = [&](int sms, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t l, const GemmConfig& config,
                 int variant) {
    GemmCase c{m, n, k, l};
    c.pad = (8 - m % 8) % 8;  // M, N and K alike modulo 8: every leading dimension 16-byte aligned
    c.config = config;
    c.a_row = variant % 4 != 3;
    c.b_row = variant % 3 != 0;
    c.d = variant % 2 ? DType::bf16 : DType::f32;
    c.ab = variant % 5 == 4 ? DType::f16 : DType::bf16;
    c.with_c = variant % 3 == 1;
    c.beta = c.with_c ? 0.5f : 0.0f;
    all.push_back({sms, c});
  };
  const GemmConfig small = sm90a_config(64, 64, 4), wide = sm90a_config(128, 128, 3);
  // Decode: 3 tiles, 2 ranks of 5 and 6 k-blocks, the rows of A under a tile.
  add(8, 5, 149, 701, 0, split(small, 2), 0);
  // 3 ranks, 1 k-block each (K = 3 k-blocks, the last ragged).
  add(6, 37, 69, 173, 0, split(small, 3), 1);
  // 4 ranks on 8 SMs: 2 clusters walk 6 tiles of 2 batches, the slots reused.
  add(8, 64, 192, 1000, 2, split(small, 4), 2);
  // Two consumer warpgroups, a ragged M, 2 clusters of 2 over 4 tiles.
  add(4, 203, 139, 403, 0, split(wide, 2), 3);
  // N wider than a tile of 256 columns.
  add(4, 64, 304, 304, 0, split(sm90a_config(64, 256, 3), 2), 4);
  // 3 ranks of 2 consumers each, one cluster for 8 tiles, C read back.
  add(3, 150, 206, 646, 0, split(sm90a_config(128, 64, 3), 3), 7);
  return all;
}

class GemmClusterSplitSim : public ::testing::TestWithParam<int> {};

TEST_P(GemmClusterSplitSim, MatchesTheFp64Reference) {
  const SplitCase s = split_cases()[GetParam()];
  SCOPED_TRACE(std::to_string(s.sms) + " SMs");
  check_gemm_case(sim_with_sms(s.sms), GemmKernel::sm90a, s.gemm);
}

INSTANTIATE_TEST_SUITE_P(Cases, GemmClusterSplitSim, ::testing::Range(0, static_cast<int>(split_cases().size())));

TEST(GemmClusterSplitSimRuns, RepeatedRunsAreRightAndBitIdentical) {
  check_runs_on_new_inputs(sim_with_sms(4), 70, 139, 571, 5, split(sm90a_config(64, 64, 4), 2));
}

TEST(GemmClusterSplitSimChoice, RefusalsNameTheRule) {
  std::mt19937 rng(std::random_device{}());
  auto reasons_for = [&](std::int64_t k, GemmKernel kernel, const GemmConfig& config) {
    const runtime::Device dev = sim_with_sms(8);
    auto a = make_matrix(dev, DType::bf16, {0, 8, k}, rng);
    auto b = make_matrix(dev, DType::bf16, {0, k, 8}, rng);
    auto d = make_matrix(dev, DType::f32, {0, 8, 8}, rng, true);
    Gemm g(a.view, b.view, nullptr, d.view, {.kernel = kernel, .config = config});
    std::string reasons;
    for (const auto& r : g.check_support()) reasons += r + "\n";
    return reasons;
  };
  const GemmConfig small = sm90a_config(64, 64, 4);
  auto expect_reason = [&](std::int64_t k, GemmKernel kernel, const GemmConfig& config, const std::string& want) {
    const std::string got = reasons_for(k, kernel, config);
    EXPECT_NE(got.find(want), std::string::npos) << got;
  };
  expect_reason(640, GemmKernel::sm90a, split(small, 5),
                "splitk5; 2..4 CTAs of a cluster along K (rank 0 adds the others' sums one after another)");
  GemmConfig pingpong = split(sm90a_config(128, 128, 3), 2);
  pingpong.pingpong = true;
  pingpong.warps_m = 1;
  expect_reason(640, GemmKernel::sm90a, pingpong,
                "splitk2 with pingpong; split-K over a cluster takes the cooperative schedule");
  expect_reason(640, GemmKernel::sm90a, split(sm90a_config(128, 128, 3, 2, 1), 2), "splitk2 with cluster 2x1;");
  GemmConfig streamk = split(small, 2);
  streamk.stream_k = true;
  expect_reason(640, GemmKernel::sm90a, streamk, "splitk2 with streamk;");
  expect_reason(136, GemmKernel::sm90a, split(small, 4),
                "splitk4 with K = 136 (3 k-blocks of 64); each CTA of the cluster needs a k-block: K > 192");
  expect_reason(640, GemmKernel::sm80,
                split({.tile_m = 64, .tile_n = 64, .tile_k = 32, .stages = 2, .warps_m = 2, .warps_n = 2}, 2),
                "splitk2; the sm80 kernel gives each CTA whole tiles (split-K over a cluster is sm90a's)");
  EXPECT_EQ(reasons_for(200, GemmKernel::sm90a, split(small, 4)), "");  // 4 k-blocks: one each
}

}  // namespace
}  // namespace warpforge::ops::testing
