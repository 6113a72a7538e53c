// The experimental sm100a GemmAmax kernel (tcgen05 block-scaled MMA into
// tensor memory) on the simulator against the CPU reference: MXFP8 (e4m3,
// e5m2), MXFP4 and NVFP4, every C dtype each allows, both C major-nesses,
// m-major A, M, N, K that are not multiples of the 128 x 128 tile or of a
// scale group, L = 1 and 3, through the TMA pipeline (over CTA pairs, the
// default past one tile of M, and single CTAs) and the staged kernel;
// where automatic picks it, and what it refuses; and that its PTX assembles
// for sm_100a.
#include <gtest/gtest.h>

#include <random>

#include "../../src/ops/gemm_amax/gemm_amax_path.hpp"
#include "../../src/ops/gemm_amax/sm100a_gemm_amax_kernel.hpp"
#include "gemm_amax_test_support.hpp"
#include "warpforge/error.hpp"
#include "ops/ptxas_record.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

GemmAmaxCase sm100a_case(DType ab, DType sf, int vec, DType c_dtype) {
  GemmAmaxCase c;
  c.ab = ab, c.sf = sf, c.vec = vec, c.c = c_dtype;
  c.tile = std::nullopt;
  c.kernel = GemmAmaxKernel::sm100a;
  c.m = 130, c.n = 136, c.k = 160,
  c.l = 1;  // two ragged tiles each way; K past the last scale group's start
  return c;
}

void expect_sm100a_pass(const GemmAmaxCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
              s.options());
  ASSERT_EQ(op.kernel_name(), "sm100a") << c.describe();
  const auto bad = run_gemm_amax_and_check(s);
  std::string all;
  for (std::size_t i = 0; i < bad.size() && i < 10; ++i) all += "\n  " + bad[i];
  EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches" << all;
}

TEST(GemmAmaxSm100aSim, MatchesTheReferenceForEachFormatAndCDtype) {
  std::uint32_t seed = 100;
  // MXFP8 into the wide C dtypes (FP8 data cannot produce FP8 C).
  for (DType ab : {DType::e4m3, DType::e5m2})
    for (DType c : {DType::f32, DType::bf16, DType::f16})
      expect_sm100a_pass(sm100a_case(ab, DType::e8m0, 32, c), seed++);
  // MXFP4 and NVFP4 into every C dtype.
  for (DType c : {DType::f32, DType::bf16, DType::f16, DType::e4m3, DType::e5m2, DType::e2m1}) {
    expect_sm100a_pass(sm100a_case(DType::e2m1, DType::e8m0, 32, c), seed++);
    expect_sm100a_pass(sm100a_case(DType::e2m1, DType::e4m3, 16, c), seed++);
  }
}

TEST(GemmAmaxSm100aSim, BatchesMajorNessAndRaggedShapes) {
  std::uint32_t seed = 200;
  GemmAmaxCase c = sm100a_case(DType::e4m3, DType::e8m0, 32, DType::bf16);
  c.l = 3, c.m = 70, c.n = 40, c.k = 96;  // one tile each way, short of a scale group along K
  c.a_k_major = false, c.c_major = CMajor::m;
  expect_sm100a_pass(c, seed++);
  GemmAmaxCase fp4 = sm100a_case(DType::e2m1, DType::e4m3, 16, DType::f32);
  fp4.l = 3, fp4.m = 129, fp4.n = 8, fp4.k = 48;
  fp4.c_major = CMajor::m;
  expect_sm100a_pass(fp4, seed++);
}

// Automatic takes it first on a simulator standing for sm_100a, where the
// Hopper kernels (wgmma) refuse; on the default (sm_90a) simulator it runs
// only when named.
TEST(GemmAmaxSm100aSim, AutomaticPicksItOnlyOnASimulatorStandingForSm100a) {
  std::mt19937 rng(7);
  GemmAmaxCase c = sm100a_case(DType::e4m3, DType::e8m0, 32, DType::f32);
  c.kernel = GemmAmaxKernel::automatic;
  auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
  GemmAmax automatic(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                     s.options());
  EXPECT_NE(automatic.kernel_name(), "sm100a");
  GemmAmaxOptions named = s.options();
  named.kernel = GemmAmaxKernel::sm100a;
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, named);
  EXPECT_NE(op.describe().find("kernel sm100a"), std::string::npos) << op.describe();
  EXPECT_NE(
      op.describe().find("never on a Blackwell GPU, so automatic picks it only on a simulator "
                         "standing for sm_100a"),
      std::string::npos)
      << op.describe();
  EXPECT_EQ(parse_gemm_amax_kernel("sm100a"), GemmAmaxKernel::sm100a);

  const runtime::Device blackwell(sim::make_backend({.target = ptx::Target::sm_100a}));
  auto b = make_gemm_amax(blackwell, c, rng);
  GemmAmax picked(*b.a.view, *b.b.view, *b.sfa.view, *b.sfb.view, *b.out.view, *b.amax.view,
                  b.options());
  EXPECT_EQ(picked.kernel_name(), "sm100a") << picked.describe();
  const auto bad = run_gemm_amax_and_check(b);
  EXPECT_TRUE(bad.empty()) << bad.size() << " mismatches, first: " << (bad.empty() ? "" : bad[0]);

  // Where it refuses (a tile it does not take), automatic goes on to what
  // sm_100a runs: not the wgmma kernels.
  GemmAmaxCase tiled = c;
  tiled.tile = GemmAmaxTile{64, 64};
  auto t = make_gemm_amax(blackwell, tiled, rng);
  GemmAmax fallback(*t.a.view, *t.b.view, *t.sfa.view, *t.sfb.view, *t.out.view, *t.amax.view,
                    t.options());
  EXPECT_EQ(fallback.kernel_name(), "sm80") << fallback.describe();
  EXPECT_NE(fallback.describe().find("has target sm_100a; the sm90a kernel needs sm_90a"),
            std::string::npos)
      << fallback.describe();
}

// Past one tile of M the pipeline runs CTA pairs (.cta_group::2, the cases
// above with M = 130 and 129); asked for single CTAs (cluster 1x1) it runs
// one M = 128 MMA per CTA.
TEST(GemmAmaxSm100aSim, RunsCtaPairsPastOneTileOfMAndSingleCtasWhenAsked) {
  std::uint32_t seed = 300;
  for (bool pair : {true, false})
    for (DType sf : {DType::e8m0, DType::e4m3}) {
      GemmAmaxCase c = sm100a_case(DType::e2m1, sf, sf == DType::e4m3 ? 16 : 32, DType::f16);
      c.m = 261, c.n = 70, c.k = 200;  // two pairs, the second's odd CTA past M
      if (!pair) c.cluster = GemmAmaxTile{1, 1};
      std::mt19937 rng(seed);
      auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
      GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                  s.options());
      const std::string want =
          pair ? "256x128 tiles over CTA pairs (.cta_group::2)" : "128x128 tiles, tcgen05";
      EXPECT_NE(op.describe().find(want), std::string::npos) << op.describe();
      expect_sm100a_pass(c, seed++);
    }
}

// k-major A and B with 16-byte rows run the TMA pipeline (the cases above
// but one); an m-major A the kernel that stages codes with plain loads.
TEST(GemmAmaxSm100aSim, TakesTheTmaPipelineWhereTheOperandsAllowIt) {
  std::mt19937 rng(9);
  for (bool k_major : {true, false}) {
    GemmAmaxCase c = sm100a_case(DType::e4m3, DType::e8m0, 32, DType::bf16);  // FP4 is k-major only
    c.a_k_major = k_major;
    auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
    GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                s.options());
    const std::string want = k_major ? "a TMA ring of 2 stages (producer and MMA threads)"
                                     : "one step at a time staged by plain loads";
    EXPECT_NE(op.describe().find(want), std::string::npos) << op.describe();
    const auto bad = run_gemm_amax_and_check(s);
    EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches";
  }
}

TEST(GemmAmaxSm100aSim, RefusesWhatItDoesNotRun) {
  GemmAmaxProblem p;
  p.m = 256, p.n = 256, p.k = 256, p.l = 1;
  p.ab_dtype = DType::e2m1, p.sf_dtype = DType::e8m0, p.vec = 16, p.c_dtype = DType::f32;
  p.a = {256, 1, 0}, p.b = {256, 1, 0}, p.c = {256, 1, 0};
  p.tile = GemmAmaxTile{64, 64};
  p.cluster = GemmAmaxTile{4, 1};
  std::string all;
  for (const auto& why : sm100a_gemm_amax_path().refusals(p, runtime::Device::sim()))
    all += why + "\n";
  EXPECT_NE(all.find("mma tile 64x64: the sm100a kernel takes 128x128"), std::string::npos) << all;
  EXPECT_NE(all.find("cluster shape 4x1: the sm100a kernel runs without clusters (1x1, "
                     ".cta_group::1) or on CTA pairs along M (2x1, .cta_group::2)"),
            std::string::npos)
      << all;
  // A pair needs the pipeline, which an m-major A rules out.
  GemmAmaxProblem staged = p;
  staged.ab_dtype = DType::e4m3, staged.vec = 32, staged.tile = std::nullopt;
  staged.a = {1, 256, 0};
  staged.cluster = GemmAmaxTile{2, 1};
  std::string pair;
  for (const auto& why : sm100a_gemm_amax_path().refusals(staged, runtime::Device::sim()))
    pair += why + "\n";
  EXPECT_NE(pair.find("cluster shape 2x1: the sm100a kernel runs CTA pairs on its TMA pipeline "
                      "only, which needs k-major A and B with 16-byte rows"),
            std::string::npos)
      << pair;
  EXPECT_THROW(build_sm100a_gemm_amax(staged, 0, true), OpsError);
  EXPECT_NE(all.find("e2m1 data with e8m0 scales per 16: the sm100a kernel runs MXFP8 and MXFP4 "
                     "(e8m0 per 32) and "
                     "NVFP4 (e4m3 per 16)"),
            std::string::npos)
      << all;
}

TEST(GemmAmaxSm100aPtxas, KernelAssemblesForSm100a) {
  if (!ptx::find_ptxas())
    GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  struct Case {
    DType ab, sf, c;
    int vec;
  };
  for (const Case& c : {Case{DType::e4m3, DType::e8m0, DType::bf16, 32},
                        Case{DType::e2m1, DType::e8m0, DType::e2m1, 32},
                        Case{DType::e2m1, DType::e4m3, DType::e4m3, 16}}) {
    GemmAmaxProblem p;
    p.m = 300, p.n = 200, p.k = 256, p.l = 2;
    p.ab_dtype = c.ab, p.sf_dtype = c.sf, p.c_dtype = c.c, p.vec = c.vec;
    p.a = {256, 1, 300 * 256}, p.b = {256, 1, 200 * 256}, p.c = {224, 1, 300 * 224};
    for (int stages : {0, 3}) {
      const auto r = recorded_ptxas(build_sm100a_gemm_amax(p, stages).to_ptx(), "sm_100a");
      EXPECT_TRUE(r.ok) << p.describe() << " stages " << stages << ":\n" << r.log;
    }
    const auto pair = recorded_ptxas(build_sm100a_gemm_amax(p, 3, true).to_ptx(), "sm_100a");
    EXPECT_TRUE(pair.ok) << p.describe() << " CTA pair:\n" << pair.log;
  }
}

}  // namespace
}  // namespace warpforge::ops::testing
