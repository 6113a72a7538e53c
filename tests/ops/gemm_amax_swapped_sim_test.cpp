// The swapped kernel of GemmAmax (A to bf16 by a pre-pass in fragment
// order, B's codes converted into wgmma's register fragments, Cᵀ = B·Aᵀ) on
// the simulator against the CPU reference: every format into every C dtype,
// M and N that are no multiple of a tile, several token tiles, split K
// (through a cluster's shared memory or the workspace),
// L = 1 and 3, the NaN rules of amax, NaN in the scale layout's padding, a
// caller's workspace, its refusals and when automatic selection takes it.
// Its exactness on cancelling inputs is in gemm_amax_exactness_test.cpp.
#include <gtest/gtest.h>

#include "gemm_amax_path_checks.hpp"
#include "../../src/ops/gemm_amax/swapped_gemm_amax_kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

GemmAmaxCase swapped_case(ScaledFormat f, DType c_dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                          std::int64_t l) {
  GemmAmaxCase c;
  c.ab = f.ab, c.sf = f.sf, c.vec = f.vec, c.c = c_dtype, c.m = m, c.n = n, c.k = k, c.l = l;
  c.tile = std::nullopt, c.kernel = GemmAmaxKernel::swapped;
  return c;
}

GemmAmaxSetup make_swapped(const GemmAmaxCase& c, std::uint32_t seed, const char* configuration = nullptr,
                           const runtime::Device& device = runtime::Device::sim()) {
  std::mt19937 rng(seed);
  auto s = make_gemm_amax(device, c, rng);
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  EXPECT_EQ(op.kernel_name(), "swapped") << op.describe();
  if (configuration) {
    EXPECT_NE(op.describe().find(configuration), std::string::npos) << op.describe();
  }
  return s;
}

// Every format of kScaledFormats into f32, bf16 and f16 C: M and N ragged
// (M no multiple of 8, N of the 128-row tile), one or two K blocks, one or
// three batches.
TEST(GemmAmaxSwappedSim, EveryFormatIntoEveryCDtype) {
  std::uint32_t seed = 5000;
  int i = 0;
  for (ScaledFormat f : kScaledFormats)
    for (DType c_dtype : {DType::f32, DType::bf16, DType::f16}) {
      auto s = make_swapped(swapped_case(f, c_dtype, 67 + 2 * i, 40 + 2 * (i % 3) + 1, 64 * (1 + i % 2), i % 2 ? 3 : 1),
                            seed++);
      expect_pass(s);
      ++i;
    }
}

// Two token tiles (M = 300: two of 152) and two row tiles.
TEST(GemmAmaxSwappedSim, TokenTiles) {
  for (ScaledFormat f : {kScaledFormats[0], kScaledFormats[3]}) {
    auto tiles = make_swapped(swapped_case(f, DType::bf16, 300, 136, 256, 1), 5100, "152 tokens x 128 rows");
    expect_pass(tiles);
  }
}

// One tile with K long enough to split over the simulator's SMs: on 2 SMs
// the splits form a cluster and add their sums in the owner's shared
// memory; on 3, 4 and 8, through the workspace; in split order either way.
TEST(GemmAmaxSwappedSim, SplitKThroughAClusterOrTheWorkspace) {
  struct Split {
    int sms;
    std::int64_t k;
    const char* says;
  };
  std::uint32_t seed = 5101;
  for (const Split& s : {Split{2, 1024, "K split 2 ways (a cluster of the splits adds their sums in shared memory)"},
                         Split{3, 1536, "K split 3 ways (their sums"}, Split{4, 2048, "K split 4 ways (their sums"},
                         Split{8, 4096, "K split 8 ways (their sums added through the workspace)"}}) {
    const runtime::Device device(sim::make_backend({.sm_count = s.sms}));
    auto split = make_swapped(swapped_case(kScaledFormats[s.sms % 4], DType::f32, 72, 40, s.k, 1), seed++, s.says,
                              device);
    expect_pass(split);
  }
}

// Up to 64 tokens a stage holds several K blocks (FP8 2, E2M1 4: 128
// bytes of each B row): K blocks no multiple of a stage's, so that the
// last stage lies partly past K (zeros, not multiplied), split K in a
// cluster (2 SMs: 18 blocks as 12 + 6) and through the workspace (8 SMs:
// 61 blocks as five splits of 12 and one of a single block), and two CTAs
// an SM (half the shared memory each: fewer blocks a stage).
TEST(GemmAmaxSwappedSim, StagesOfSeveralKBlocks) {
  struct Case {
    int format, sms;
    std::int64_t k;
    const char* says;
  };
  std::uint32_t seed = 5150;
  for (const Case& c : {Case{0, 2, 1152, "K split 2 ways (a cluster of the splits adds their sums in shared memory), "
                                         "8 stages of 2 K blocks (128 bytes a B row)"},
                        Case{3, 2, 1152, "K split 2 ways (a cluster"},
                        Case{2, 8, 3904, "K split 6 ways (their sums added through the workspace), 6 stages of 4 K "
                                         "blocks (128 bytes a B row)"},
                        Case{4, 8, 3904, "K split 6 ways (their sums"},
                        // One SM, one tile: two CTAs an SM hold its two splits.
                        Case{3, 1, 2048, "K split 2 ways (their sums added through the workspace), 5 stages of 2 K "
                                         "blocks (64 bytes a B row), 2 CTAs an SM"}}) {
    const runtime::Device device(sim::make_backend({.sm_count = c.sms}));
    auto s = make_swapped(swapped_case(kScaledFormats[c.format], DType::bf16, 40, 40, c.k, 1), seed++, c.says, device);
    expect_pass(s);
  }
}

// More K blocks to a split than the ring has stages: the loader requests
// the first ring's B before it waits for the pre-pass (griddepcontrol.wait),
// their A tiles after it, then both for each later block.
TEST(GemmAmaxSwappedSim, SplitsLongerThanTheRing) {
  for (ScaledFormat f : {kScaledFormats[0], kScaledFormats[2]}) {
    auto s = make_swapped(swapped_case(f, DType::bf16, 136, 260, 2048, 1), 5200, "K split 1 ways, 8 stages");
    expect_pass(s);
  }
}

// Splits of whole stages (K's 24 blocks in 2 splits of 3 stages of 4,
// through the workspace: a stage's first three blocks run without testing
// for a successor) on a ring of 2 that each split walks round one and a
// half times, NVFP4 and MXFP8.
TEST(GemmAmaxSwappedSim, SplitsOfWholeStages) {
  ::setenv("WARPFORGE_SWAPPED_TILING", "2,2,0,4,1", 1);
  std::uint32_t seed = 5250;
  for (ScaledFormat f : {kScaledFormats[3], kScaledFormats[0]}) {
    const std::string says = "K split 2 ways (their sums added through the workspace), 2 stages of 4 K blocks (" +
                             std::string(f.ab == DType::e2m1 ? "128" : "256") + " bytes a B row)";
    auto s = make_swapped(swapped_case(f, DType::bf16, 16, 40, 1536, 1), seed++, says.c_str());
    expect_pass(s);
  }
  ::unsetenv("WARPFORGE_SWAPPED_TILING");
}

// C M-major (the transposed store takes any strides), M just past the
// skinny kernel's range, and N under one 128-row tile with three batches.
TEST(GemmAmaxSwappedSim, MMajorCAndSmallShapes) {
  GemmAmaxCase m_major = swapped_case(kScaledFormats[1], DType::bf16, 70, 136, 192, 2);
  m_major.c_major = CMajor::m;
  auto s = make_swapped(m_major, 5600);
  expect_pass(s);
  auto small = make_swapped(swapped_case(kScaledFormats[2], DType::f16, 17, 8, 64, 3), 5601);
  expect_pass(small);
}

// The family's shared checks (gemm_amax_path_checks.hpp); the workspace
// zero-filled, as GemmAmax documents (split-K's counters).
TEST(GemmAmaxSwappedSim, AmaxRules) {
  check_amax_rules(swapped_case, [](const GemmAmaxCase& c, std::uint32_t seed) { return make_swapped(c, seed); },
                   5200);
}

TEST(GemmAmaxSwappedSim, NaNScalePaddingStaysOutOfC) {
  check_nan_scale_padding(swapped_case, [](const GemmAmaxCase& c, std::uint32_t seed) { return make_swapped(c, seed); },
                          130, 72, 128, 5300);
}

TEST(GemmAmaxSwappedSim, CallersWorkspace) {
  check_callers_workspace(swapped_case(kScaledFormats[3], DType::bf16, 72, 40, 1024, 2),
                          [](const GemmAmaxCase& c, std::uint32_t seed) { return make_swapped(c, seed); }, 5400, 0,
                          static_cast<std::size_t>(2 * 72 * 1024 * 2));
}

// What the path refuses, each reason naming the rule.
TEST(GemmAmaxSwappedSim, RefusalsNameTheRule) {
  struct Refused {
    GemmAmaxCase c;
    const char* says;
  };
  GemmAmaxCase ragged_k = swapped_case(kScaledFormats[0], DType::f32, 40, 24, 96, 1);
  GemmAmaxCase fp8_c = swapped_case(kScaledFormats[2], DType::e4m3, 40, 24, 64, 1);
  GemmAmaxCase tiled = swapped_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1);
  tiled.tile = GemmAmaxTile{128, 256};
  GemmAmaxCase a_m_major = swapped_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1);
  a_m_major.a_k_major = false;
  for (const Refused& r : {Refused{ragged_k, "K 96: the swapped kernel takes K a multiple of 64"},
                           Refused{fp8_c, "writes f32, bf16 or f16 C"}, Refused{tiled, "output tile is T x 128"},
                           Refused{a_m_major, "A is not K-major"}}) {
    std::mt19937 rng(5500);
    auto s = make_gemm_amax(runtime::Device::sim(), r.c, rng);
    GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
    std::string all;
    for (const auto& why : op.check_support()) all += why + "\n";
    EXPECT_NE(all.find(r.says), std::string::npos) << r.c.describe() << ":\n" << all;
  }
}

// What the kernel builder refuses, each tiling named with its rule.
TEST(GemmAmaxSwappedSim, KernelBuilderRefusesTilingsItCannotRun) {
  GemmAmaxProblem p;
  p.m = 64, p.n = 256, p.k = 256, p.l = 1;
  p.ab_dtype = DType::e4m3, p.sf_dtype = DType::e8m0, p.c_dtype = DType::bf16, p.vec = 32;
  p.a = {256, 1, 64 * 256}, p.b = {256, 1, 256 * 256}, p.c = {256, 1, 64 * 256};
  struct Case {
    SwappedGemmAmaxTiling t;
    const char* says;
  };
  auto expect_refused = [&](const Case& c) {
    try {
      build_swapped_gemm_amax(p, c.t);
      ADD_FAILURE() << "built " << c.t.tokens << " tokens, " << c.t.stages << " stages, " << c.t.splits << " splits";
    } catch (const OpsError& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what() << "\n  lacks: " << c.says;
    }
  };
  for (const Case& c : {Case{{.tokens = 64, .stages = 1},
                             "64 tokens, 1 stages of 1 K blocks, 1 CTAs an SM; it takes 8 to 256 tokens (a multiple "
                             "of 8), 2 to 32 stages, 1, 2 or 4 K blocks a stage and 1 or 2 CTAs an SM"},
                        Case{{.tokens = 64, .ctas_per_sm = 3}, "3 CTAs an SM"},
                        Case{{.tokens = 64, .blocks = 3}, "6 stages of 3 K blocks"},
                        Case{{.tokens = 68}, "68 tokens, 6 stages"},
                        Case{{.tokens = 264}, "264 tokens"},
                        Case{{.tokens = 64, .stages = 33}, "33 stages"},
                        Case{{.tokens = 64, .splits = 3}, "3 K splits of 4 K blocks; every split needs at least one"}})
    expect_refused(c);
  // 18 K blocks: 9 splits of 2, more than a portable cluster holds.
  p.k = 1152, p.a = {1152, 1, 64 * 1152}, p.b = {1152, 1, 256 * 1152};
  expect_refused({{.tokens = 64, .splits = 9, .cluster = true},
                  "9 K splits in a cluster; a cluster takes up to 8 (the portable cluster size)"});
}

}  // namespace
}  // namespace warpforge::ops::testing
