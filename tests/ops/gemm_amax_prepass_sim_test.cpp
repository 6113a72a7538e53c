// The prepass path of GemmAmax (bf16 copies of A and B by a pre-pass, then
// the bf16 sm90a GEMM with its amax epilogue) on the simulator against the
// CPU reference: every format into every C dtype it writes, M, N, K that
// are not multiples of any tile or of the pre-pass's 32 codes, L = 1 and 3,
// the NaN rules of amax, a caller's workspace, and when automatic selection
// takes it. Its exactness on cancelling inputs is in
// gemm_amax_exactness_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>

#include "gemm_amax_test_support.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
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

void expect_pass(GemmAmaxSetup& s, float initial_amax = 0.0f) {
  const auto bad = run_gemm_amax_and_check(s, initial_amax);
  std::string all;
  for (std::size_t i = 0; i < bad.size() && i < 10; ++i) all += "\n  " + bad[i];
  EXPECT_TRUE(bad.empty()) << s.c.describe() << ": " << bad.size() << " mismatches" << all;
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

// amax folds into the caller's value; NaN in A's data makes its row of C and
// amax NaN; an e5m2 infinity makes its row of C inf, and the accumulator's
// inf x 0 past N (B's zero fill) must not turn amax into NaN.
TEST(GemmAmaxPrepassSim, AmaxRules) {
  {
    auto s = make_prepass(prepass_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1), 3200);
    expect_pass(s, 1e6f);
    EXPECT_EQ(s.amax_value(), 1e6f);
  }
  {
    GemmAmaxCase c = prepass_case(kScaledFormats[0], DType::bf16, 40, 24, 64, 2);
    auto s = make_prepass(c, 3201);
    s.a.bytes[static_cast<std::size_t>(5 * s.a.stride_row + 3 + s.a.stride_batch)] = 0x7F;  // e4m3 NaN
    s.upload(s.a);
    expect_pass(s);
    EXPECT_TRUE(std::isnan(s.amax_value()));
    int nans = 0;
    for (float v : s.c_values()) nans += std::isnan(v);
    EXPECT_EQ(nans, c.n);  // row 5 of batch 1
  }
  {
    auto s = make_prepass(prepass_case(kScaledFormats[1], DType::f32, 20, 12, 64, 1), 3202);
    EXPECT_EQ(amax_with_infinity_in_a(s), INFINITY);
  }
}

// NaN in the scale layout's padding (rows past M or N, blocks past K)
// reaches neither C nor amax: the pre-pass's codes past K land past the
// GEMM's K.
TEST(GemmAmaxPrepassSim, NaNScalePaddingStaysOutOfC) {
  std::uint32_t seed = 3300;
  for (ScaledFormat f : {kScaledFormats[0], kScaledFormats[2], kScaledFormats[3]}) {
    auto s = make_prepass(prepass_case(f, DType::f32, 130, 72, 80, 1), seed++);
    for (auto [t, rows] : {std::pair{&s.sfa, s.c.m}, std::pair{&s.sfb, s.c.n}}) {
      const ScaleFactorLayout layout{rows, s.c.k, s.c.l, s.c.vec};
      for (std::int64_t o = 0; o < layout.bytes(); ++o)
        if (layout.coordinate(o).padding) t->bytes[static_cast<std::size_t>(o)] = f.sf == DType::e8m0 ? 0xFF : 0x7F;
      s.upload(*t);
    }
    expect_pass(s);
    EXPECT_FALSE(std::isnan(s.amax_value())) << s.c.describe();
  }
}

// With caller_workspace the op allocates nothing: execute() without a
// workspace is refused naming its size, with one it runs (twice, the same
// bits: the copies are rewritten every run).
TEST(GemmAmaxPrepassSim, CallersWorkspace) {
  GemmAmaxCase c = prepass_case(kScaledFormats[3], DType::bf16, 48, 40, 96, 2);
  auto s = make_prepass(c, 3400);
  GemmAmaxOptions options = s.options();
  options.caller_workspace = true;
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, options);
  const std::size_t bytes = op.workspace_bytes();
  EXPECT_GE(bytes, static_cast<std::size_t>(2 * (48 + 40) * 96 * 2));
  try {
    op.execute(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view);
    ADD_FAILURE() << "ran without a workspace";
  } catch (const OpsError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(bytes) + " bytes"), std::string::npos) << e.what();
  }
  runtime::Buffer workspace(s.a.view->device(), bytes);
  workspace.fill(0x7F);  // stale data: the pre-pass overwrites what the GEMM reads
  const runtime::TensorView ws(workspace, DType::u8, {static_cast<std::int64_t>(bytes)});
  const auto bad = run_gemm_amax_and_check(s, 0.0f, &op, &ws);
  EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad.front());
  const std::vector<float> first = s.c_values();
  const auto again = run_gemm_amax_and_check(s, 0.0f, &op, &ws);
  EXPECT_TRUE(again.empty());
  const std::vector<float> second = s.c_values();
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(0, std::memcmp(first.data(), second.data(), first.size() * sizeof(float)));
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

// Automatic selection takes the prepass path from M x L = 4096 rows and says
// why it passed it over below (describe()), where the swapped kernel runs.
TEST(GemmAmaxPrepassSim, AutomaticSelectionFromLargeM) {
  for (auto [m, l, expected] : {std::tuple{4096, 1, "prepass"}, std::tuple{2048, 2, "prepass"},
                                std::tuple{2000, 2, "swapped"}, std::tuple{256, 1, "swapped"}}) {
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
