// ops::GroupedGemm's stream kernel (bf16 tokens against packed block-scaled
// weights, and both quantized with amax) on the simulator against the fp64
// reference per group: every format (MXFP4, NVFP4, MXFP8 e4m3/e5m2, FP4 with
// e8m0 per 16), empty groups, one token, every token in one group, rows
// past the last end, N and K no multiples of the packed tiles (16 rows, 256
// codes), K split over CTAs (and determinism), scales that do not fold
// (the exact slow conversion), and the dense weight-only GEMM (one group,
// no offsets). Each case asserts that the stream kernel runs it.
#include <gtest/gtest.h>

#include "ops/grouped_gemm_cases.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

constexpr BlockScaledFormat kFormats[] = {kMxfp4, kNvfp4, kMxfp8E4m3, kMxfp8E5m2, {DType::e2m1, DType::e8m0, 16}};

struct StreamCase {
  BlockScaledFormat format = kMxfp4;
  std::vector<std::int32_t> ends;
  std::int64_t m = 0, n = 0, k = 0;
  DType d = DType::f32;
  double weight_scale = 1.0;  // large: scales that do not fold
  bool scaled_a = false;      // A quantized like B, with amax
  bool offsets = true;
  bool one_large_scale = false;  // one lane of a warp cannot fold
};

struct StreamRun {
  HostTensor d;
  float amax = 0;
  std::string describe;
};

StreamRun run_stream(const runtime::Device& device, const StreamCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto g = static_cast<std::int64_t>(c.ends.size());
  DeviceWeights w = make_weights(device, c.format, g, c.n, c.k, rng, c.weight_scale, c.one_large_scale);
  auto a = make_matrix(device, DType::bf16, {0, c.m, c.k, true}, rng);
  std::optional<DeviceScaledA> qa;
  if (c.scaled_a) qa.emplace(make_scaled_a(device, c.format, c.m, c.k, rng));
  auto d = make_matrix(device, c.d, {0, c.m, c.n, true}, rng, true);
  auto offsets = make_offsets(device, c.ends);
  runtime::Tensor amax = runtime::Tensor::empty(device, DType::f32, {1});
  const float zero = 0;
  amax.copy_from_host(&zero, 4);
  const GroupedGemmTensors t{qa ? qa->codes_view : a.view, w.codes_view, c.offsets ? &offsets.view : nullptr, d.view,
                             qa ? &qa->scales_view : nullptr, &w.scales_view, qa ? &amax : nullptr};
  GroupedGemm op(t, {.out_dtype = c.d, .sf_vec_size = c.format.vec});
  EXPECT_TRUE(op.check_support().empty()) << op.describe();
  EXPECT_EQ(op.kernel_name(), "stream") << op.describe();
  op.execute(t);
  StreamRun run{HostTensor::download(d.view), 0, op.describe()};
  const GroupedReference want = qa ? grouped_gemm_reference(qa->host(), w.host(), offsets.host)
                                   : grouped_gemm_reference(a.host, w.host(), offsets.host);
  const auto bad = grouped_mismatches(run.d, want, c.k);
  std::string all;
  for (const auto& s : bad) all += "\n  " + s;
  EXPECT_TRUE(bad.empty()) << run.describe << all;
  if (qa) {
    amax.copy_to_host(&run.amax, 4);
    const double most = reference_amax(want);
    EXPECT_NEAR(run.amax, most, static_cast<double>(c.k) * std::ldexp(1.0, -23) * most + 1e-30) << run.describe;
  }
  return run;
}

TEST(GroupedGemmStreamSim, EveryFormatWithEmptyGroupsOneTokenAndATail) {
  const runtime::Device device = runtime::Device::sim();
  std::uint32_t seed = 100;
  for (BlockScaledFormat f : kFormats)
    for (DType d : {DType::f32, DType::bf16}) {
      SCOPED_TRACE(std::string(runtime::name(f.data)) + " x " + std::string(runtime::name(f.scale)) + "/" +
                   std::to_string(f.vec) + " -> " + std::string(runtime::name(d)));
      // Groups of 1, 0, 6 and 0 tokens, 2 rows past the last end; N past a
      // 16-row tile, K past a 256-code chunk.
      run_stream(device, {f, ends_of({1, 0, 6, 0}), 9, 40, 288, d}, seed++);
    }
}

TEST(GroupedGemmStreamSim, EveryTokenInOneGroupAcrossTokenTiles) {
  // 37 tokens in one of three groups: tiles of 64 tokens, K of 3 chunks.
  run_stream(runtime::Device::sim(), {kNvfp4, ends_of({0, 37, 0}), 37, 24, 640, DType::bf16}, 200);
}

TEST(GroupedGemmStreamSim, ScalesThatDoNotFoldTakeTheExactSlowWay) {
  const runtime::Device device = runtime::Device::sim();
  // Weights of magnitude ~2^10: e8m0 scales past 2^1, e4m3 ones past 4.
  run_stream(device, {kMxfp4, ends_of({3, 4}), 7, 32, 256, DType::f32, 1024.0}, 300);
  run_stream(device, {kNvfp4, ends_of({3, 4}), 7, 32, 256, DType::f32, 1024.0}, 301);
  run_stream(device, {kMxfp8E4m3, ends_of({3, 4}), 7, 32, 256, DType::f32, 1e6}, 302);
}

TEST(GroupedGemmStreamSim, OneLaneThatCannotFoldTurnsTheWholeWarp) {
  const runtime::Device device = runtime::Device::sim();
  for (BlockScaledFormat f : {kMxfp4, kNvfp4, kMxfp8E4m3}) {
    StreamCase c{f, ends_of({4, 2}), 6, 24, 256, DType::f32};
    c.one_large_scale = true;
    run_stream(device, c, 350);
  }
}

TEST(GroupedGemmStreamSim, KSplitOverCtasIsDeterministic) {
  // One group of 2 tokens, N = 32, K = 4096 (16 chunks): few units, so
  // the tiling splits K; two runs give the same bits.
  const runtime::Device device = runtime::Device::sim();
  const StreamCase c{kMxfp4, ends_of({2}), 2, 32, 4096, DType::f32};
  const StreamRun first = run_stream(device, c, 400), second = run_stream(device, c, 400);
  EXPECT_NE(first.describe.find("K split"), std::string::npos) << first.describe;
  EXPECT_EQ(first.describe.find("K split 1 ways"), std::string::npos) << first.describe;
  EXPECT_EQ(first.d.bytes, second.d.bytes);
}

TEST(GroupedGemmStreamSim, BothQuantizedFoldsAmax) {
  const runtime::Device device = runtime::Device::sim();
  run_stream(device, {kMxfp8E4m3, ends_of({0, 5, 3}), 8, 24, 256, DType::bf16, 1.0, true}, 500);
  run_stream(device, {kNvfp4, ends_of({4, 0, 6}), 12, 40, 320, DType::f32, 1.0, true}, 501);
}

TEST(GroupedGemmStreamSim, OneGroupWithoutOffsetsIsTheDenseWeightOnlyGemm) {
  StreamCase c{kMxfp4, ends_of({5}), 5, 48, 512, DType::bf16};
  c.offsets = false;
  run_stream(runtime::Device::sim(), c, 600);
}

}  // namespace
}  // namespace warpforge::ops::testing
