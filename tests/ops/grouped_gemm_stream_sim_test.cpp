// ops::GroupedGemm's stream kernel (bf16 tokens against packed block-scaled
// weights, and both quantized with amax) on the simulator against the fp64
// reference per group: every format (MXFP4, NVFP4, MXFP8 e4m3/e5m2, FP4 with
// e8m0 per 16), empty groups, one token, every token in one group, rows
// past the last end, N and K no multiples of the packed tiles (16 rows, 256
// codes), K split over CTAs (determinism: their sums through the
// workspace in split order), scales that do not fold
// (the exact slow conversion), and the dense weight-only GEMM (one group,
// no offsets). Each case asserts that the stream kernel runs it. And the
// tiling the GPU gets at the dense decode shape.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <optional>

#include "ops/grouped_gemm_cases.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

TEST(GroupedGemmStreamSim, EveryFormatWithEmptyGroupsOneTokenAndATail) {
  const runtime::Device device = runtime::Device::sim();
  std::uint32_t seed = 100;
  for (BlockScaledFormat f : kGroupedFormats)
    for (DType d : {DType::f32, DType::bf16}) {
      SCOPED_TRACE(std::string(runtime::name(f.data)) + " x " + std::string(runtime::name(f.scale)) + "/" +
                   std::to_string(f.vec) + " -> " + std::string(runtime::name(d)));
      // Groups of 1, 0, 6 and 0 tokens, 2 rows past the last end; N past a
      // 16-row tile, K past a 256-code chunk.
      run_stream(device, {f, ends_of({1, 0, 6, 0}), 9, 40, 288, d}, seed++);
    }
}

TEST(GroupedGemmStreamSim, EveryTokenInOneGroupAcrossTokenTiles) {
  const runtime::Device device = runtime::Device::sim();
  // 37 tokens in one of three groups: tiles of 64 tokens, K of 3 chunks.
  run_stream(device, {kNvfp4, ends_of({0, 37, 0}), 37, 24, 640, DType::bf16}, 200);
  // 12 tokens in one group: a tile of 16, 8 warps a CTA (256 or 128 rows,
  // N past them).
  for (BlockScaledFormat f : {kMxfp4, kMxfp8E4m3}) {
    const StreamRun r = run_stream(device, {f, ends_of({12}), 12, 264, 288, DType::bf16}, 201);
    EXPECT_NE(r.describe.find("(8 warps x"), std::string::npos) << r.describe;
  }
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
  // the tiling splits K (their sums through the workspace); two runs give
  // the same bits.
  const runtime::Device device = runtime::Device::sim();
  const StreamCase c{kMxfp4, ends_of({2}), 2, 32, 4096, DType::f32};
  const StreamRun first = run_stream(device, c, 400), second = run_stream(device, c, 400);
  EXPECT_NE(first.describe.find("K split"), std::string::npos) << first.describe;
  EXPECT_EQ(first.describe.find("K split 1 ways"), std::string::npos) << first.describe;
  EXPECT_NE(first.describe.find("(their sums added through the workspace)"), std::string::npos) << first.describe;
  EXPECT_EQ(first.d.bytes, second.d.bytes);
  // One group with 11 rows past its end: those rows' units (the pseudo-group)
  // write zeros while the split sums of the real rows still add up.
  const StreamRun past = run_stream(device, {kMxfp4, ends_of({2}), 13, 32, 4096, DType::f32}, 401);
  EXPECT_EQ(past.describe.find("K split 1 ways"), std::string::npos) << past.describe;
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

// The dense weight-only GEMM at N = K = 8192, 1 and 16 tokens, on an H100's
// or H200's 132 SMs, in every weight format and bf16: the stream kernel
// takes it, and its K split makes one wave (work items, units x splits, at
// most the CTAs) that fills at least half the CTAs. FP4 and FP8 at 4 CTAs
// an SM (2 stages): MXFP4 64 units of 128 rows x 8 splits = 512 items on
// 528 CTAs (3 CTAs and 7 splits had left 52 CTAs a second item); at 16
// tokens 2 CTAs of 8 warps: 32 units of 256 rows x 8 splits. Compiled,
// not run (the simulator would take minutes).
TEST(GroupedGemmStreamSim, TheDenseDecodeShapeSplitsKIntoOneWave) {
  const runtime::Device device(sim::make_backend({.sm_count = 132}));
  auto number_before = [](const std::string& text, const std::string& what) -> std::int64_t {
    const std::size_t at = text.find(what);
    if (at == std::string::npos) return -1;
    std::size_t begin = at;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1]))) --begin;
    return begin == at ? -1 : std::stoll(text.substr(begin, at - begin));
  };
  for (std::int64_t tokens : {1, 16})
    for (int format = 0; format < 4; ++format) {
      const bool bf16 = format == 3;
      const BlockScaledFormat f = format == 0 ? kMxfp4 : format == 1 ? kNvfp4 : kMxfp8E4m3;
      const PackedWeightsLayout l{f.data, f.scale, f.vec, 1, 8192, 8192};
      const auto a = runtime::Tensor::empty(device, DType::bf16, {tokens, 8192});
      const auto codes = runtime::Tensor::empty(device, f.data == DType::e2m1 ? DType::u8 : f.data, {l.code_bytes()});
      const auto scales = runtime::Tensor::empty(device, l.scale, {l.scale_bytes()});
      const auto weights = runtime::Tensor::empty(device, DType::bf16, {8192 * 8192});
      const runtime::TensorView b(device, weights.address(), DType::bf16, {8192, 8192}, {1, 8192});  // K contiguous
      const auto d = runtime::Tensor::empty(device, DType::bf16, {tokens, 8192});
      std::optional<GroupedGemm> op;
      if (bf16)
        op.emplace(GroupedGemmTensors{a, b, nullptr, d});
      else
        op.emplace(GroupedGemmTensors{a, codes, nullptr, d, nullptr, &scales}, GroupedGemmOptions{.sf_vec_size = f.vec});
      const std::string text = op->describe();
      SCOPED_TRACE((bf16 ? std::string("bf16") : std::string(runtime::name(f.data)) + "/" + std::to_string(f.vec)) +
                   ", " + std::to_string(tokens) + " tokens: " + text);
      EXPECT_EQ(op->kernel_name(), "stream");
      const std::int64_t rows = number_before(text, " rows x "), per_sm = number_before(text, " CTAs an SM");
      const std::int64_t splits = number_before(text, " ways");
      ASSERT_GT(rows, 0);
      ASSERT_GT(per_sm, 0);
      ASSERT_GT(splits, 0);
      const std::int64_t items = (8192 + rows - 1) / rows * splits, ctas = 132 * per_sm;
      EXPECT_LE(items, ctas);
      EXPECT_GE(2 * items, ctas);
      // Packed: 16 warps an SM, as 4 CTAs of 4 or, at 16 tokens, 2 of 8.
      if (!bf16) EXPECT_EQ(per_sm, tokens == 16 ? 2 : 4);
    }
}

}  // namespace
}  // namespace warpforge::ops::testing
