// ops::GroupedGemm on a GPU against the fp64 reference per group (each of
// its kernels: sm80, the sm90a design, stream): every simulator case again (empty groups, one token, every token in one group,
// group ends off the tiles, K no multiple of 128, rows past the last end,
// both majors of B, every D dtype, clamped offsets, ragged K, every
// block-scaled format, the slow conversions, one lane that cannot fold,
// split K, both quantized with amax, the dense weight-only GEMM), then
// expert shapes of published models under a skewed routing: gpt-oss-120b's
// decode (MXFP4, 1 and 16 tokens), Qwen3-30B-A3B's (NVFP4, MXFP8), bf16
// prefill-sized groups and weight-only ones on the sm90a design. Skips,
// saying why, without a GPU.
#include "gpu_fixture.hpp"
#include "ops/grouped_gemm_cases.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

using namespace ops::testing;
using ops::BlockScaledFormat;
using GroupedGemmGpu = GpuTest;

TEST_F(GroupedGemmGpu, TheSimulatorsBf16Cases) {
  const Device d = Device::cuda(0);
  RaggedMCase n_major{ends_of({0, 1, 37, 0, 70, 0}), 113, 72, 72, DType::bf16, DType::f32, false, "sm90a"};
  run_ragged_m(d, n_major, 1);
  n_major.kernel = "sm80", n_major.named = ops::GroupedGemmKernel::sm80;
  run_ragged_m(d, n_major, 1);
  // Pinned as on the simulator: automatic selection gives K-major A and B
  // to the sm90a design on Hopper (case 20 and after run that one).
  RaggedMCase one_group{ends_of({0, 0, 150, 0}), 150, 40, 64, DType::bf16, DType::bf16, true};
  one_group.named = ops::GroupedGemmKernel::sm80;
  run_ragged_m(d, one_group, 2);
  run_ragged_m(d, {ends_of({3, 129, 17}), 149, 24, 200, DType::f16, DType::f16, false, "sm90a"}, 3);
  run_ragged_m(d, {ends_of({40, 0, 60}), 100, 1096, 80, DType::bf16, DType::bf16, false, "sm90a"}, 24);
  run_ragged_m(d, {{10, 5, 200, 30}, 50, 16, 48, DType::bf16, DType::bf16, false, "sm90a"}, 4);
  run_ragged_m(d, {ends_of({1, 0, 6, 0}), 9, 40, 296, DType::bf16, DType::f32, true, "stream"}, 8);
  run_ragged_m(d, {ends_of({0, 14, 9}), 23, 24, 520, DType::bf16, DType::bf16, true, "stream"}, 9);
  run_ragged_m(d, {ends_of({2}), 2, 16, 4096, DType::bf16, DType::f32, true, "stream"}, 10);
  run_ragged_m(d, {ends_of({0, 150, 0}), 150, 40, 64, DType::bf16, DType::bf16, true, "sm90a"}, 20);
  run_ragged_m(d, {ends_of({0, 0, 150, 0}), 150, 40, 64, DType::bf16, DType::bf16, true, "sm90a"}, 2);
  run_ragged_m(d, {ends_of({70, 0, 33, 97}), 230, 136, 200, DType::bf16, DType::f32, true, "sm90a"}, 21);
  run_ragged_m(d, {ends_of({45, 80}), 125, 24, 72, DType::f16, DType::f16, true, "sm90a"}, 22);
  run_ragged_m(d, {ends_of({40, 60}), 100, 1032, 64, DType::bf16, DType::bf16, true, "sm90a"}, 23);
}

TEST_F(GroupedGemmGpu, Bf16GroupsOfPrefillSize) {
  // 8 experts, 1024 rows routed with a skew, N 512, K 1032 (no multiple of 128 or 32).
  std::mt19937 rng(11);
  const Device d = Device::cuda(0);
  run_ragged_m(d, {ends_of(skewed_sizes(1024, 8, 1.0, rng)), 1024, 512, 1032, DType::bf16, DType::bf16, true, "sm90a"},
               12);
  run_ragged_m(d, {ends_of(skewed_sizes(600, 16, 1.5, rng)), 600, 384, 512, DType::bf16, DType::f32, false, "sm90a"},
               13);
}

TEST_F(GroupedGemmGpu, Bf16RaggedKIsTheWeightsGradient) {
  std::mt19937 rng(14);
  const Device d = Device::cuda(0);
  RaggedKCase c{ends_of(skewed_sizes(700, 6, 1.2, rng)), 256, 136, 700};
  run_ragged_k(d, c, 14);
  c.kernel = "sm80", c.named = ops::GroupedGemmKernel::sm80;
  run_ragged_k(d, c, 14);
  // The simulator's cases, then 16 experts with empty ones and 256-wide tiles.
  run_ragged_k(d, {ends_of({5, 0, 40, 19, 0}), 48, 40, 64}, 6);
  run_ragged_k(d, {ends_of({70, 0, 1, 130, 63, 0}), 136, 1048, 270, DType::bf16}, 25);
  run_ragged_k(d, {ends_of(skewed_sizes(1500, 16, 1.5, rng)), 512, 1032, 1500, DType::bf16}, 27);
}

// Decode at gpt-oss-120b's expert shape (gate/up: K 2880, N 5760; top 4),
// over 8 experts rather than its 128 (the host reference and the random
// weights of 128 would take minutes; the schedule's tables are tested at
// many groups on the simulator).
TEST_F(GroupedGemmGpu, Bf16DecodeAtGptOssShapes) {
  std::mt19937 rng(15);
  const Device d = Device::cuda(0);
  for (std::int64_t tokens : {1, 16})
    run_ragged_m(d, {ends_of(skewed_sizes(4 * tokens, 8, 1.0, rng)), 4 * tokens, 5760, 2880, DType::bf16,
                     DType::bf16, true, "stream"},
                 static_cast<std::uint32_t>(16 + tokens));
}

TEST_F(GroupedGemmGpu, TheSimulatorsBlockScaledCases) {
  const Device d = Device::cuda(0);
  std::uint32_t seed = 100;
  for (BlockScaledFormat f : kGroupedFormats)
    for (DType out : {DType::f32, DType::bf16}) run_stream(d, {f, ends_of({1, 0, 6, 0}), 9, 40, 288, out}, seed++);
  run_stream(d, {ops::kNvfp4, ends_of({0, 37, 0}), 37, 24, 640, DType::bf16}, 200);
  for (BlockScaledFormat f : {ops::kMxfp4, ops::kMxfp8E4m3})  // a 16-token tile: 8 warps a CTA
    run_stream(d, {f, ends_of({12}), 12, 264, 288, DType::bf16}, 201);
  run_stream(d, {ops::kMxfp4, ends_of({3, 4}), 7, 32, 256, DType::f32, 1024.0}, 300);
  run_stream(d, {ops::kNvfp4, ends_of({3, 4}), 7, 32, 256, DType::f32, 1024.0}, 301);
  run_stream(d, {ops::kMxfp8E4m3, ends_of({3, 4}), 7, 32, 256, DType::f32, 1e6}, 302);
  for (BlockScaledFormat f : {ops::kMxfp4, ops::kNvfp4, ops::kMxfp8E4m3}) {
    StreamCase c{f, ends_of({4, 2}), 6, 24, 256, DType::f32};
    c.one_large_scale = true;
    run_stream(d, c, 350);
  }
  const StreamCase split{ops::kMxfp4, ends_of({2}), 2, 32, 4096, DType::f32};
  EXPECT_EQ(run_stream(d, split, 400).d.bytes, run_stream(d, split, 400).d.bytes);
  run_stream(d, {ops::kMxfp8E4m3, ends_of({0, 5, 3}), 8, 24, 256, DType::bf16, 1.0, true}, 500);
  run_stream(d, {ops::kNvfp4, ends_of({4, 0, 6}), 12, 40, 320, DType::f32, 1.0, true}, 501);
  StreamCase dense{ops::kMxfp4, ends_of({5}), 5, 48, 512, DType::bf16};
  dense.offsets = false;
  run_stream(d, dense, 600);
}

// Weight-only prefill on the sm90a path (the RS design): the simulator's
// cases, then 8 experts of 768 skewed rows, N 1040 (off the 256-wide tile
// and the 128 weight rows), K 544 (off the 256-code chunk) in three formats.
TEST_F(GroupedGemmGpu, WeightOnlyPrefillOnTheSm90aDesign) {
  const Device d = Device::cuda(0);
  std::mt19937 rng(40);
  std::uint32_t seed = 30;
  for (BlockScaledFormat f : kGroupedFormats) {
    StreamCase c{f, ends_of({1, 0, 140, 0}), 143, 40, 328, DType::bf16};
    c.kernel = "sm90a", c.named = ops::GroupedGemmKernel::sm90a;
    run_stream(d, c, seed++);
  }
  StreamCase wide{ops::kMxfp4, ends_of({0, 140}), 140, 1040, 64, DType::f32};
  wide.kernel = "sm90a", wide.named = ops::GroupedGemmKernel::sm90a;
  run_stream(d, wide, seed++);
  StreamCase slow{ops::kNvfp4, ends_of({5, 60}), 65, 24, 96, DType::f32, 1024.0};
  slow.kernel = "sm90a", slow.named = ops::GroupedGemmKernel::sm90a;
  run_stream(d, slow, seed++);
  for (BlockScaledFormat f : {ops::kMxfp4, ops::kNvfp4, ops::kMxfp8E4m3}) {
    StreamCase c{f, ends_of(skewed_sizes(768, 8, 1.0, rng)), 768, 1040, 544, DType::bf16};
    c.kernel = "sm90a", c.named = ops::GroupedGemmKernel::sm90a;
    run_stream(d, c, seed++);
  }
}

// The RS design's three consumer warpgroups (T = 128 at 60 tokens a group:
// 192 weight rows a CTA), N 1040 off them, K off the k-block, a group
// across two token tiles and an empty one; MXFP4, NVFP4, MXFP8. Then its
// narrowest tile, T = 64, which automatic selection takes at 17-32 tokens a
// group (here 24: a group across two tiles, one empty). Small:
// scripts/gpu-moe-prefill.sh and gpu-wo-decode.sh run it under compute-sanitizer.
TEST_F(GroupedGemmGpu, WeightOnlyRsThreeWarpgroups) {
  const Device d = Device::cuda(0);
  std::uint32_t seed = 90;
  for (BlockScaledFormat f : {ops::kMxfp4, ops::kNvfp4, ops::kMxfp8E4m3}) {
    StreamCase c{f, ends_of({30, 30, 170, 240}), 240, 1040, 544, DType::bf16};
    c.kernel = "sm90a", c.named = ops::GroupedGemmKernel::sm90a;
    const StreamRun r = run_stream(d, c, seed++);
    EXPECT_NE(r.describe.find("192 rows x 128 tokens"), std::string::npos) << r.describe;
  }
  StreamCase narrow{ops::kMxfp4, ends_of({9, 9, 78, 96}), 96, 1040, 544, DType::bf16};
  narrow.kernel = "sm90a";
  const StreamRun r = run_stream(d, narrow, seed++);
  EXPECT_NE(r.describe.find("192 rows x 64 tokens"), std::string::npos) << r.describe;
}

// The RS design with K split (its fewest units fill at most half the SMs):
// a dense layer at 128 tokens, its 9 units of 1040 rows split 4 ways on
// 132 SMs (fewer SMs: fewer splits), the same bits twice; NVFP4 with an
// empty group and rows past the last end (the pseudo-group's zeros), K off
// the k-block. Small: scripts/gpu-moe-prefill.sh runs it under compute-sanitizer.
TEST_F(GroupedGemmGpu, WeightOnlyRsSplitsK) {
  const Device d = Device::cuda(0);
  StreamCase dense{ops::kMxfp4, ends_of({128}), 128, 1040, 4096, DType::f32};
  dense.kernel = "sm90a", dense.named = ops::GroupedGemmKernel::sm90a;
  const StreamRun split = run_stream(d, dense, 80);
  std::printf("  %s\n", split.describe.c_str());
  EXPECT_EQ(split.d.bytes, run_stream(d, dense, 80).d.bytes);
  StreamCase ragged{ops::kNvfp4, ends_of({0, 70}), 90, 300, 2000, DType::bf16};
  ragged.kernel = "sm90a", ragged.named = ops::GroupedGemmKernel::sm90a;
  std::printf("  %s\n", run_stream(d, ragged, 81).describe.c_str());
}

// The RS design at 256 tokens a tile (M / G = 234): a group across three
// token tiles (its last partial), an empty group, rows past the last end
// (zeros), N off the 128 weight rows, K off the 64-code k-block; MXFP4,
// NVFP4, MXFP8. Small: scripts/gpu-moe-prefill.sh runs it under compute-sanitizer.
TEST_F(GroupedGemmGpu, WeightOnlyRsTokenTilesAcrossAGroup) {
  const Device d = Device::cuda(0);
  std::uint32_t seed = 60;
  for (BlockScaledFormat f : {ops::kMxfp4, ops::kNvfp4, ops::kMxfp8E4m3}) {
    StreamCase c{f, ends_of({600, 0, 90}), 702, 200, 1000, DType::bf16};
    c.kernel = "sm90a", c.named = ops::GroupedGemmKernel::sm90a;
    run_stream(d, c, seed++);
  }
}

// Decode at published expert shapes: tokens x top-k (token, expert) pairs
// over the experts, skewed; gate/up projections (N = 2 x expert, K =
// hidden); over 8 of gpt-oss's 128 experts and 32 of Qwen3's 128 (all of
// them would take minutes of host quantization and reference).
TEST_F(GroupedGemmGpu, DecodeAtPublishedExpertShapes) {
  const Device d = Device::cuda(0);
  std::mt19937 rng(21);
  struct Model {
    const char* name;
    std::int64_t experts, top_k, hidden, expert;
    BlockScaledFormat format;
  };
  for (const Model& m : {Model{"gpt-oss-120b", 8, 4, 2880, 2880, ops::kMxfp4},
                         Model{"Qwen3-30B-A3B", 32, 8, 2048, 768, ops::kNvfp4},
                         Model{"Qwen3-30B-A3B", 32, 8, 2048, 768, ops::kMxfp8E4m3}})
    for (std::int64_t tokens : {1, 16}) {
      SCOPED_TRACE(std::string(m.name) + ", " + std::to_string(tokens) + " tokens");
      const std::int64_t rows = tokens * m.top_k;
      const StreamRun r = run_stream(d, {m.format, ends_of(skewed_sizes(rows, m.experts, 1.0, rng)), rows,
                                         2 * m.expert, m.hidden, DType::bf16},
                                     static_cast<std::uint32_t>(30 + tokens));
      std::printf("  %s, %lld tokens: %s\n", m.name, static_cast<long long>(tokens), r.describe.c_str());
    }
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
