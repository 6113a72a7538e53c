// The prepass path of GemmAmax (bf16 copies of A and B by a pre-pass, then
// the bf16 sm90a GEMM with its amax epilogue) on the simulator against the
// CPU reference: every format into every C dtype it writes, M, N, K that
// are not multiples of any tile or of the pre-pass's 32 codes, L = 1 and 3,
// the NaN rules of amax, a caller's workspace, and when automatic selection
// takes it. Its exactness on cancelling inputs is in
// gemm_amax_exactness_test.cpp.
#include <gtest/gtest.h>

#include <tuple>

#include "gemm_amax_path_checks.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

GemmAmaxCase prepass_case(ScaledFormat f, DType c_dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                          std::int64_t l) {
  GemmAmaxCase c;
  c.ab = f.ab, c.sf = f.sf, c.vec = f.vec, c.c = c_dtype, c.m = m, c.n = n, c.k = k, c.l = l;
  c.tile = std::nullopt, c.kernel = GemmAmaxKernel::prepass;
  return c;
}

GemmAmaxSetup make_prepass(const GemmAmaxCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  EXPECT_EQ(op.kernel_name(), "prepass") << op.describe();
  return s;
}

// Every format of kScaledFormats into f32, bf16 and f16 C: ragged shapes
// (K past one 32-code group by a part of one, N odd), three batches.
TEST(GemmAmaxPrepassSim, EveryFormatIntoEveryCDtype) {
  std::uint32_t seed = 3000;
  int i = 0;
  for (ScaledFormat f : kScaledFormats)
    for (DType c_dtype : {DType::f32, DType::bf16, DType::f16}) {
      // FP4 rows are whole bytes and FP8 rows 16-byte multiples (make_gemm_amax pads them).
      const std::int64_t k = f.ab == DType::e2m1 ? 112 : 80 + 16 * (i % 2);
      auto s = make_prepass(prepass_case(f, c_dtype, 72 + i, 40 + 2 * (i % 3) + 1, k, i % 2 ? 3 : 1), seed++);
      expect_pass(s);
      ++i;
    }
}

// More tiles than the simulator's SMs and a K of several stages.
TEST(GemmAmaxPrepassSim, ManyTilesAndLongK) {
  auto s = make_prepass(prepass_case(kScaledFormats[0], DType::bf16, 200, 136, 320, 1), 3100);
  expect_pass(s);
}

// The family's shared checks (gemm_amax_path_checks.hpp): NaN in the
// padding stays out of C also because the pre-pass's codes past K land
// past the GEMM's K; stale data in the workspace is overwritten by the
// pre-passes before the GEMM reads it.
TEST(GemmAmaxPrepassSim, AmaxRules) { check_amax_rules(prepass_case, make_prepass, 3200); }

TEST(GemmAmaxPrepassSim, NaNScalePaddingStaysOutOfC) {
  check_nan_scale_padding(prepass_case, make_prepass, 130, 72, 80, 3300);
}

TEST(GemmAmaxPrepassSim, CallersWorkspace) {
  check_callers_workspace(prepass_case(kScaledFormats[3], DType::bf16, 48, 40, 96, 2), make_prepass, 3400, 0x7F,
                          static_cast<std::size_t>(2 * (48 + 40) * 96 * 2));
}

// What the path refuses, each reason naming the rule.
TEST(GemmAmaxPrepassSim, RefusalsNameTheRule) {
  struct Refused {
    GemmAmaxCase c;
    const char* says;
  };
  GemmAmaxCase m_major = prepass_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1);
  m_major.c_major = CMajor::m;
  GemmAmaxCase fp8_c = prepass_case(kScaledFormats[2], DType::e4m3, 40, 24, 64, 1);
  GemmAmaxCase tiled = prepass_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1);
  tiled.tile = GemmAmaxTile{128, 128};
  GemmAmaxCase a_m_major = prepass_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1);
  a_m_major.a_k_major = false;
  for (const Refused& r : {Refused{m_major, "writes N-major C"}, Refused{fp8_c, "writes f32, bf16 or f16 C"},
                           Refused{tiled, "chooses its own"}, Refused{a_m_major, "A is not K-major"}}) {
    std::mt19937 rng(3500);
    auto s = make_gemm_amax(runtime::Device::sim(), r.c, rng);
    GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
    std::string all;
    for (const auto& why : op.check_support()) all += why + "\n";
    EXPECT_NE(all.find(r.says), std::string::npos) << r.c.describe() << ":\n" << all;
  }
}

// Automatic selection takes the prepass path from M x L = 3072 rows and says
// why it passed it over below (describe()), where the swapped kernel runs.
TEST(GemmAmaxPrepassSim, AutomaticSelectionFromLargeM) {
  for (auto [m, l, expected] : {std::tuple{3072, 1, "prepass"}, std::tuple{1024, 3, "prepass"},
                                std::tuple{2048, 1, "swapped"}, std::tuple{1500, 2, "swapped"},
                                std::tuple{256, 1, "swapped"}}) {
    GemmAmaxCase c = prepass_case(kScaledFormats[2], DType::bf16, m, 64, 64, l);
    c.kernel = GemmAmaxKernel::automatic;
    std::mt19937 rng(3600);
    auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
    GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
    EXPECT_EQ(op.kernel_name(), expected) << op.describe();
    if (std::string(expected) == "swapped") {
      EXPECT_NE(op.describe().find("not prepass:\n  - M x L = "), std::string::npos) << op.describe();
    }
  }
}

}  // namespace
}  // namespace warpforge::ops::testing
