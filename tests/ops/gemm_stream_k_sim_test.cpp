// Stream-K on the sm90a kernel, on simulated devices of a chosen SM count
// (the persistent grid's size): runs of k-blocks that end inside units, runs
// of whole units, more CTAs than split k-blocks (empty runs), one wave and a
// remainder, a remainder under half a wave (a whole wave split too), fewer
// units than SMs; against the fp64 reference, and bit-identical repeats.
#include <gtest/gtest.h>

#include "ops/gemm_sm90a_cases.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

runtime::Device sim_with_sms(int sms) { return runtime::Device(sim::make_backend({.sm_count = sms})); }

GemmConfig stream_k(GemmConfig c) {
  c.stream_k = true;
  return c;
}

struct StreamKCase {
  int sms;
  GemmCase gemm;
};

std::vector<StreamKCase> stream_k_cases() {
  std::vector<StreamKCase> all;
  auto add = [&](int sms, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t l, const GemmConfig& config,
                 int variant) {
    GemmCase c{m, n, k, l};
    c.pad = (8 - m % 8) % 8;
    c.config = stream_k(config);
    c.a_row = variant % 2 == 0;
    c.b_row = variant % 3 != 0;
    c.d = variant % 2 ? DType::bf16 : DType::f32;
    c.ab = variant % 4 == 3 ? DType::f16 : DType::bf16;
    c.with_c = variant % 3 == 1;
    c.beta = c.with_c ? 1.0f : 0.0f;
    all.push_back({sms, c});
  };
  const GemmConfig small = sm90a_config(64, 64, 2), wide = sm90a_config(128, 128, 3);
  // 6 units of 64 x 64 on 4 SMs: one wave, 2 split over 4 CTAs (11 k-blocks each).
  add(4, 131, 75, 699, 0, small, 0);
  // 12 units on 5 SMs: a remainder of 2 is under half a wave, so the last 7 split.
  add(5, 195, 139, 571, 0, small, 1);
  // 2 units of 3 k-blocks on 7 SMs: 6 k-blocks, one CTA's run is empty.
  add(7, 67, 35, 171, 0, small, 2);
  // 9 units of one k-block on 4 SMs: the last 5 split, runs of whole units.
  add(4, 131, 139, 27, 0, small, 3);
  // Batches: 2 x 4 units of 128 x 128 on 3 SMs, the last 2 split.
  add(3, 203, 139, 403, 2, wide, 4);
  // Fewer units than SMs, long K: a unit's k-blocks shared by 3 CTAs.
  add(6, 123, 251, 1171, 0, wide, 5);
  // The 128 x 256 tile the heuristic picks at large sizes: 3 units on 2 SMs, the last split.
  add(2, 259, 243, 459, 0, sm90a_config(128, 256, 3), 6);
  return all;
}

class GemmStreamKSim : public ::testing::TestWithParam<int> {};

TEST_P(GemmStreamKSim, MatchesTheFp64Reference) {
  const StreamKCase s = stream_k_cases()[GetParam()];
  SCOPED_TRACE(std::to_string(s.sms) + " SMs");
  const runtime::Device dev = sim_with_sms(s.sms);
  check_gemm_case(dev, GemmKernel::sm90a, s.gemm);
}

INSTANTIATE_TEST_SUITE_P(Cases, GemmStreamKSim, ::testing::Range(0, static_cast<int>(stream_k_cases().size())));

TEST(GemmStreamKSimRuns, RepeatedRunsAreRightAndBitIdentical) {
  check_runs_on_new_inputs(sim_with_sms(5), 195, 139, 571, 5, stream_k(sm90a_config(64, 64, 2)));
}

TEST(GemmStreamKSimChoice, RefusalsNameTheRule) {
  std::mt19937 rng(std::random_device{}());
  auto reasons_for = [&](const runtime::Device& dev, std::int64_t k, GemmKernel kernel, const GemmConfig& config) {
    auto a = make_matrix(dev, DType::bf16, {0, 8, k}, rng);
    auto b = make_matrix(dev, DType::bf16, {0, k, 8}, rng);
    auto d = make_matrix(dev, DType::f32, {0, 8, 8}, rng, true);
    Gemm g(a.view, b.view, nullptr, d.view, {.kernel = kernel, .config = config});
    std::string reasons;
    for (const auto& r : g.check_support()) reasons += r + "\n";
    return reasons;
  };
  const runtime::Device dev = sim_with_sms(4);
  GemmConfig pingpong = stream_k(sm90a_config(128, 128, 3));
  pingpong.pingpong = true;
  EXPECT_NE(reasons_for(dev, 64, GemmKernel::sm90a, pingpong)
                .find("streamk with pingpong; stream-K takes the cooperative schedule without clusters"),
            std::string::npos);
  EXPECT_NE(reasons_for(dev, 64, GemmKernel::sm90a, stream_k(sm90a_config(128, 128, 3, 2, 1)))
                .find("streamk with cluster 2x1; stream-K takes the cooperative schedule without clusters"),
            std::string::npos);
  EXPECT_NE(reasons_for(dev, 64, GemmKernel::sm80,
                        stream_k({.tile_m = 64, .tile_n = 64, .tile_k = 32, .stages = 2, .warps_m = 2, .warps_n = 2}))
                .find("streamk; the sm80 kernel gives each CTA whole tiles (stream-K is sm90a's)"),
            std::string::npos);
  // 2 x 2^20 SMs x 2049 k-blocks passes 2^32.
  const std::string huge =
      reasons_for(sim_with_sms(1 << 20), 64 * 2049, GemmKernel::sm90a, stream_k(sm90a_config(64, 64, 2)));
  EXPECT_NE(huge.find("streamk with K = 131136 on 1048576 SMs; the k-blocks split among the CTAs (2 x SMs x K/64) "
                      "must stay below 2^32"),
            std::string::npos)
      << huge;
  EXPECT_NE(huge.find("streamk on 1048576 SMs; the CTAs' shares are computed in 32 bits, which takes fewer than "
                      "65536 SMs"),
            std::string::npos)
      << huge;
}

}  // namespace
}  // namespace warpforge::ops::testing
