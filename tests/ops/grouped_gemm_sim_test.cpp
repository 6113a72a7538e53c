// ops::GroupedGemm's bf16/f16 kernels (sm80, the sm90a design, the stream
// kernel for bf16 weights) on the simulator against the fp64 reference per
// group: empty groups, one token, every token in one group, group ends that
// are no multiple of any tile, K no multiple of 128 (nor of the tile's 32),
// rows past the last end (zeros), both majors of B on both tiled kernels,
// every D dtype, one group without offsets, offsets out of order (clamped),
// the weights' gradient (ragged K) with empty groups and groups across
// k-blocks on both, determinism, bf16 weights with K
// contiguous on the stream kernel at few tokens a group, and the GPU's grid
// sizes (132 SMs).
#include <gtest/gtest.h>

#include "ops/grouped_gemm_cases.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

TEST(GroupedGemmSim, EmptyGroupsOneTokenAndRowsPastTheLastEnd) {
  // Groups of 0, 1, 37, 0, 70 and 0 rows, 5 rows past the last end; K = 72;
  // B N-major (dA = dD·Bᵀ's layout): the sm90a design's MN-major B, and sm80.
  RaggedMCase c{ends_of({0, 1, 37, 0, 70, 0}), 113, 72, 72, DType::bf16, DType::f32, false, "sm90a"};
  run_ragged_m(runtime::Device::sim(), c, 1);
  c.kernel = "sm80", c.named = GroupedGemmKernel::sm80;
  run_ragged_m(runtime::Device::sim(), c, 1);
}

TEST(GroupedGemmSim, EveryTokenInOneGroupKMajorB) {
  RaggedMCase c{ends_of({0, 0, 150, 0}), 150, 40, 64, DType::bf16, DType::bf16, true};
  c.named = GroupedGemmKernel::sm80;
  run_ragged_m(runtime::Device::sim(), c, 2);
}

// The Hopper design (warp-specialized template): K-major A and B past 32
// tokens a group; group ends off the 128-row tiles, empty groups, rows past
// the last end (zeroed by the consumers), K no multiple of 64 (TMA's zero
// fill), N no multiple of the tile, 128- and 256-wide tiles, f16, every D.
TEST(GroupedGemmSim, TheSm90aDesign) {
  const runtime::Device device = runtime::Device::sim();
  run_ragged_m(device, {ends_of({0, 150, 0}), 150, 40, 64, DType::bf16, DType::bf16, true, "sm90a"}, 20);
  run_ragged_m(device, {ends_of({0, 0, 150, 0}), 150, 40, 64, DType::bf16, DType::bf16, true, "sm90a"}, 2);
  run_ragged_m(device, {ends_of({70, 0, 33, 97}), 230, 136, 200, DType::bf16, DType::f32, true, "sm90a"}, 21);
  run_ragged_m(device, {ends_of({45, 80}), 125, 24, 72, DType::f16, DType::f16, true, "sm90a"}, 22);
  run_ragged_m(device, {ends_of({40, 60}), 100, 1032, 64, DType::bf16, DType::bf16, true, "sm90a"}, 23);
}

// Weight-only on the sm90a path (the RS design, sm90a_grouped_rs.hpp): every
// format, empty groups, one token, a group across row (token) tiles, rows
// past the last end, N off the 16-row packed tiles and the 128-wide tile, K
// off the 64-code k-blocks and 256-code chunks; 1040 rows (and automatic
// selection past 16 tokens a group for FP4 and 32 for FP8, the stream
// kernel's up to them);
// scales that do not fold (the exact slow conversion); 256 tokens a tile.
TEST(GroupedGemmSim, WeightOnlyOnTheSm90aDesign) {
  const runtime::Device device = runtime::Device::sim();
  std::uint32_t seed = 30;
  for (BlockScaledFormat f : kGroupedFormats) {
    SCOPED_TRACE(std::string(runtime::name(f.data)) + " x " + std::string(runtime::name(f.scale)) + "/" +
                 std::to_string(f.vec));
    StreamCase c{f, ends_of({1, 0, 140, 0}), 143, 40, 328, DType::bf16};
    c.kernel = "sm90a", c.named = GroupedGemmKernel::sm90a;
    const StreamRun r = run_stream(device, c, seed++);
    // T = 128 (2M / G): three consumer warpgroups, 192 weight rows a CTA.
    EXPECT_NE(r.describe.find("192 rows x 128 tokens"), std::string::npos) << r.describe;
  }
  // Automatic selection on the GPU's 132 SMs: 70 tokens a group on
  // average, the sm90a path (the RS design); 32, FP4 the RS design at its
  // narrowest tile (64 tokens), FP8 the stream kernel; 16, the stream kernel.
  const runtime::Device gpu_sized(sim::make_backend({.sm_count = 132}));
  StreamCase wide{kMxfp4, ends_of({0, 140}), 140, 1040, 200, DType::f32};
  wide.kernel = "sm90a";
  run_stream(gpu_sized, wide, seed++);
  StreamCase middle{kMxfp4, ends_of({0, 64}), 64, 1040, 64, DType::f32};
  middle.kernel = "sm90a";
  const StreamRun m = run_stream(gpu_sized, middle, seed++);
  EXPECT_NE(m.describe.find("192 rows x 64 tokens"), std::string::npos) << m.describe;
  StreamCase fp8{kMxfp8E4m3, ends_of({0, 64}), 64, 1040, 64, DType::f32};
  fp8.kernel = "stream";
  run_stream(gpu_sized, fp8, seed++);
  StreamCase narrow{kMxfp4, ends_of({0, 32}), 32, 1040, 64, DType::f32};
  narrow.kernel = "stream";
  run_stream(gpu_sized, narrow, seed++);
  for (BlockScaledFormat f : {kNvfp4, kMxfp8E5m2}) {
    StreamCase slow{f, ends_of({5, 60}), 65, 24, 96, DType::f32, 1024.0};
    slow.kernel = "sm90a", slow.named = GroupedGemmKernel::sm90a;
    run_stream(device, slow, seed++);
  }
  // The RS design's widest tile (256 tokens: M / G = 200), a group across
  // two; 5 k-blocks (its fragment sets rotate in threes; wide: 4).
  StreamCase tall{kMxfp4, ends_of({290, 100}), 400, 24, 264, DType::bf16};
  tall.kernel = "sm90a", tall.named = GroupedGemmKernel::sm90a;
  run_stream(device, tall, seed++);
}

// The RS design with K split (its fewest units fill at most half of the
// GPU's 132 SMs): an empty group, a group of 30 tokens, rows past the last
// end (zeros), N 200 (two weight tiles), K 1800 (29 k-blocks, 3 splits of
// 10, 10 and 9; off the 64-code k-block); f32 D, and the same bits twice
// (the splits' sums added in split order, whichever arrives last). NVFP4 at
// 2 splits.
TEST(GroupedGemmSim, WeightOnlyRsSplitsK) {
  const runtime::Device gpu_sized(sim::make_backend({.sm_count = 132}));
  StreamCase c{kMxfp4, ends_of({0, 30}), 40, 200, 1800, DType::f32};
  c.kernel = "sm90a", c.named = GroupedGemmKernel::sm90a;
  const StreamRun first = run_stream(gpu_sized, c, 70);
  EXPECT_NE(first.describe.find("K split 3 ways"), std::string::npos) << first.describe;
  EXPECT_EQ(first.d.bytes, run_stream(gpu_sized, c, 70).d.bytes);
  StreamCase nvfp4{kNvfp4, ends_of({17}), 17, 130, 1024, DType::bf16};
  nvfp4.kernel = "sm90a", nvfp4.named = GroupedGemmKernel::sm90a;
  const StreamRun two = run_stream(gpu_sized, nvfp4, 71);
  EXPECT_NE(two.describe.find("K split 2 ways"), std::string::npos) << two.describe;
}

TEST(GroupedGemmSim, F16OperandsGroupEndsOffTheTiles) {
  run_ragged_m(runtime::Device::sim(), {ends_of({3, 129, 17}), 149, 24, 200, DType::f16, DType::f16, false, "sm90a"}, 3);
  // B N-major, 256-wide tiles (4 boxes of 64 columns) and N past the last box.
  run_ragged_m(runtime::Device::sim(), {ends_of({40, 0, 60}), 100, 1096, 80, DType::bf16, DType::bf16, false, "sm90a"},
               24);
}

TEST(GroupedGemmSim, OffsetsOutOfOrderAreClamped) {
  // Read as the running maximum clamped to M: ends 10, 10, 50, 50.
  run_ragged_m(runtime::Device::sim(), {{10, 5, 200, 30}, 50, 16, 48, DType::bf16, DType::bf16, false, "sm90a"}, 4);
  run_ragged_m(runtime::Device::sim(),
               {{10, 5, 200, 30}, 50, 16, 48, DType::bf16, DType::bf16, false, "sm80", GroupedGemmKernel::sm80}, 4);
}

TEST(GroupedGemmSim, OneGroupWithoutOffsetsIsADenseGemm) {
  std::mt19937 rng(5);
  const runtime::Device device = runtime::Device::sim();
  auto a = make_matrix(device, DType::bf16, {0, 33, 40, true}, rng);
  auto b = make_matrix(device, DType::bf16, {0, 40, 20, false}, rng);
  auto d = make_matrix(device, DType::f32, {0, 33, 20, true}, rng, true);
  const GroupedGemmTensors t{a.view, b.view, nullptr, d.view};
  GroupedGemm op(t, {.out_dtype = DType::f32});
  ASSERT_TRUE(op.check_support().empty()) << op.describe();
  op.execute(t);
  HostTensor b3 = b.host;  // the reference's one group: (1, K, N)
  b3.shape.insert(b3.shape.begin(), 1);
  b3.strides.insert(b3.strides.begin(), 0);
  const std::vector<std::int32_t> ends{33};
  const auto bad = grouped_mismatches(HostTensor::download(d.view), grouped_gemm_reference(a.host, b3, ends), 40);
  EXPECT_TRUE(bad.empty()) << bad.front();
}

// dB[g] = X[rows of g]ᵀ · dY[rows of g]: A = Xᵀ (M contiguous), B = dY.
TEST(GroupedGemmSim, RaggedKIsTheWeightsGradient) {
  const runtime::Device device = runtime::Device::sim();
  RaggedKCase c{ends_of({5, 0, 40, 19, 0}), 48, 40, 64};
  run_ragged_k(device, c, 6);
  c.kernel = "sm80", c.named = GroupedGemmKernel::sm80;
  run_ragged_k(device, c, 6);
}

// The sm90a design's ragged K: groups across k-blocks of 64 that start
// anywhere (the last one's rows of the next group zeroed), one token, empty
// groups (D[g] zeros), K rows past the last end, M and N past their tiles
// (two M tiles, 256-wide N tiles), bf16 D; every row in one group.
TEST(GroupedGemmSim, RaggedKOnTheSm90aDesign) {
  const runtime::Device device = runtime::Device::sim();
  run_ragged_k(device, {ends_of({70, 0, 1, 130, 63, 0}), 136, 1048, 270, DType::bf16}, 25);
  run_ragged_k(device, {ends_of({200}), 64, 72, 200}, 26);
  // D's rows 2 elements past N (not 16-byte multiples): staged stores, not TMA's.
  RaggedKCase padded{ends_of({30, 0, 50}), 40, 136, 80, DType::bf16};
  padded.d_pad = 2;
  run_ragged_k(device, padded, 27);
}

// bf16 weights with K contiguous at few tokens a group: the stream kernel
// reads them where they lie (rows past N and K past its end zero-filled).
TEST(GroupedGemmSim, FewTokensAGroupStreamBf16Weights) {
  const runtime::Device device = runtime::Device::sim();
  run_ragged_m(device, {ends_of({1, 0, 6, 0}), 9, 40, 296, DType::bf16, DType::f32, true, "stream"}, 8);
  run_ragged_m(device, {ends_of({0, 14, 9}), 23, 24, 520, DType::bf16, DType::bf16, true, "stream"}, 9);
  // One group of 2 tokens and K of 16 chunks: K split over CTAs.
  run_ragged_m(device, {ends_of({2}), 2, 16, 4096, DType::bf16, DType::f32, true, "stream"}, 10);
}

// 160 groups (5 offsets a lane of the table's warp), most of them empty.
TEST(GroupedGemmSim, ManyGroupsMostlyEmpty) {
  std::mt19937 rng(11);
  const runtime::Device device = runtime::Device::sim();
  run_ragged_m(device, {ends_of(skewed_sizes(60, 160, 1.5, rng)), 60, 24, 40, DType::bf16, DType::f32, false, "sm90a"},
               12);
  run_ragged_m(device, {ends_of(skewed_sizes(12, 160, 1.0, rng)), 12, 16, 264, DType::bf16, DType::bf16, true, "stream"},
               13);
}

// The sm90a design's D: staged through shared memory where a row's pairs
// are 4-byte aligned (N odd, D padded to an even row: the last column's
// half a pair), else from the fragments' registers (N odd, D unpadded).
TEST(GroupedGemmSim, Sm90aOddColumnsOfD) {
  const runtime::Device device = runtime::Device::sim();
  RaggedMCase c{ends_of({20, 0, 45}), 70, 37, 96, DType::bf16, DType::bf16, true, "sm90a"};
  run_ragged_m(device, c, 28);
  c.d_pad = 3;
  run_ragged_m(device, c, 28);
}

TEST(GroupedGemmSim, SameInputsGiveTheSameBits) {
  const RaggedMCase c{ends_of({20, 0, 45}), 70, 24, 96, DType::bf16, DType::f32, false, "sm90a"};
  const runtime::Device device = runtime::Device::sim();
  EXPECT_EQ(run_ragged_m(device, c, 7).bytes, run_ragged_m(device, c, 7).bytes);
}

// The grids an H100/H200 gets (132 SMs: persistent CTAs with no work, the
// stream kernel's K split sized for them) on the GPU tests' small cases.
TEST(GroupedGemmSim, TheGpusGridSizes) {
  const runtime::Device device(sim::make_backend({.sm_count = 132}));
  run_ragged_m(device, {ends_of({0, 1, 37, 0, 70, 0}), 113, 72, 72, DType::bf16, DType::f32, false, "sm90a"}, 1);
  run_ragged_m(device, {ends_of({0, 0, 150, 0}), 150, 40, 64, DType::bf16, DType::bf16, true, "sm90a"}, 2);
  run_ragged_k(device, {ends_of({70, 0, 1, 130, 63, 0}), 136, 1048, 270, DType::bf16}, 25);
  run_ragged_m(device, {ends_of({70, 0, 33, 97}), 230, 136, 200, DType::bf16, DType::f32, true, "sm90a"}, 21);
  run_ragged_m(device, {ends_of({1, 0, 6, 0}), 9, 40, 296, DType::bf16, DType::f32, true, "stream"}, 8);
  run_ragged_m(device, {ends_of({2}), 2, 16, 4096, DType::bf16, DType::f32, true, "stream"}, 10);
  run_stream(device, {kMxfp4, ends_of({1, 0, 6, 0}), 9, 40, 288, DType::bf16}, 100);
  run_stream(device, {kNvfp4, ends_of({2}), 2, 32, 4096, DType::f32}, 400);
}

}  // namespace
}  // namespace warpforge::ops::testing
