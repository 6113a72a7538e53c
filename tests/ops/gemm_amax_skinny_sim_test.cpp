// The skinny GemmAmax kernel (small M: B's codes streamed into registers
// and converted into mma.sync fragments, A converted into shared memory,
// split K) on the simulator against the CPU reference: every data and scale
// format into every C dtype it writes, both C majors, M from 1 to 64 (tokens
// past M in the last 8), N not a multiple of the CTA's rows, L = 1 and 2,
// K split over several CTAs (deterministic: two runs give the same bits),
// the exact slow conversions, and the NaN rule of amax. Each case asserts
// that GemmAmax chooses the skinny kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "../../src/ops/gemm_amax/gemm_amax_path.hpp"
#include "gemm_amax_test_support.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

const auto& kSkinnyFormats = kScaledFormats;

GemmAmaxCase skinny_case(ScaledFormat f, std::int64_t m, std::int64_t n, std::int64_t k, DType c_dtype) {
  GemmAmaxCase c;
  c.ab = f.ab, c.sf = f.sf, c.vec = f.vec, c.c = c_dtype, c.m = m, c.n = n, c.k = k, c.tile = std::nullopt;
  c.kernel = GemmAmaxKernel::skinny;  // automatic selection takes it up to M = 16 only
  return c;
}

// Runs case `c` on `device` (twice on one object), asserting that the skinny
// kernel takes it and that both runs match the reference and each other.
void expect_pass(const runtime::Device& device, const GemmAmaxCase& c, std::uint32_t seed, int splits = 0) {
  std::mt19937 rng(seed);
  auto s = make_gemm_amax(device, c, rng);
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  ASSERT_EQ(op.kernel_name(), "skinny") << c.describe() << "\n" << op.describe();
  if (splits) {
    std::vector<std::string> refused;
    const auto p = describe_gemm_amax(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                                      s.options(), refused);
    ASSERT_EQ(skinny_gemm_amax_tiling(p, device).splits, splits) << c.describe();
    EXPECT_GT(op.workspace_bytes(), 0u);
  }
  std::vector<float> first;
  for (int run = 0; run < 2; ++run) {
    const auto bad = run_gemm_amax_and_check(s, 0.0f, &op);
    std::string all;
    for (std::size_t i = 0; i < bad.size() && i < 8; ++i) all += "\n  " + bad[i];
    EXPECT_TRUE(bad.empty()) << c.describe() << ", run " << run << ": " << bad.size() << " mismatches" << all;
    const std::vector<float> values = s.c_values();
    if (run == 0)
      first = values;
    else
      EXPECT_EQ(std::memcmp(first.data(), values.data(), first.size() * sizeof(float)), 0)
          << c.describe() << ": the second run's C differs";
  }
}

TEST(GemmAmaxSkinnySim, EveryFormatIntoEveryCDtype) {
  const runtime::Device device = runtime::Device::sim();
  int i = 0;
  for (ScaledFormat f : kSkinnyFormats)
    for (DType c_dtype : {DType::f32, DType::bf16, DType::f16}) {
      const std::int64_t m = (i % 3 == 0) ? 1 : (i % 3 == 1 ? 13 : 24);
      GemmAmaxCase c = skinny_case(f, m, i % 2 ? 136 : 72, f.ab == DType::e2m1 ? 256 : 128, c_dtype);
      c.c_major = i % 2 ? CMajor::m : CMajor::n;
      c.l = i % 4 == 3 ? 2 : 1;
      expect_pass(device, c, 1100 + static_cast<std::uint32_t>(i++));
    }
}

// 33 to 128 tokens: up to 16 token tiles (FP8 one 16-row tile a warp, E2M1 two).
TEST(GemmAmaxSkinnySim, UpToOneHundredTwentyEightTokens) {
  const runtime::Device device = runtime::Device::sim();
  expect_pass(device, skinny_case(kSkinnyFormats[0], 64, 80, 256, DType::bf16), 1200);
  expect_pass(device, skinny_case(kSkinnyFormats[3], 41, 40, 256, DType::f32), 1201);
  expect_pass(device, skinny_case(kSkinnyFormats[0], 128, 40, 256, DType::bf16), 1202);
  expect_pass(device, skinny_case(kSkinnyFormats[2], 100, 24, 256, DType::f32), 1203);
}

// K split over CTAs where the output tiles are few (a 16-SM simulator: 4
// CTAs a SM), the partial sums added in split order by the last CTA.
TEST(GemmAmaxSkinnySim, SplitKAddsPartialsInAFixedOrder) {
  const runtime::Device device(sim::make_backend({.sm_count = 16}));
  expect_pass(device, skinny_case(kSkinnyFormats[0], 16, 200, 128 * 24, DType::bf16), 1300, 3);
  GemmAmaxCase c = skinny_case(kSkinnyFormats[3], 3, 130, 128 * 17, DType::f32);
  c.l = 2;
  expect_pass(device, c, 1301, 2);
}

// Scales that do not fold into one bf16 factor (e8m0 past 254 - u, tiny
// e8m0, subnormal and large e4m3) and FP8 codes that are NaN or inf take
// the exact slow conversion; a NaN makes amax NaN.
TEST(GemmAmaxSkinnySim, ScalesThatDoNotFoldConvertExactly) {
  const runtime::Device device = runtime::Device::sim();
  for (ScaledFormat f : {kSkinnyFormats[0], kSkinnyFormats[3]}) {
    GemmAmaxCase c = skinny_case(f, 9, 40, f.ab == DType::e2m1 ? 256 : 128, DType::f32);
    std::mt19937 rng(1400);
    auto s = make_gemm_amax(device, c, rng);
    make_unfoldable_scales(s);
    GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
    ASSERT_EQ(op.kernel_name(), "skinny");
    const auto bad = run_gemm_amax_and_check(s, 0.0f, &op);
    EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches; " << (bad.empty() ? "" : bad[0]);
  }
}

TEST(GemmAmaxSkinnySim, NaNCodeMakesAmaxNaN) {
  const runtime::Device device = runtime::Device::sim();
  GemmAmaxCase c = skinny_case(kSkinnyFormats[0], 5, 24, 128, DType::bf16);
  std::mt19937 rng(1500);
  auto s = make_gemm_amax(device, c, rng);
  s.a.bytes[3] = 0x7F;  // e4m3 NaN
  s.upload(s.a);
  const auto bad = run_gemm_amax_and_check(s);
  EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad[0]);
  EXPECT_TRUE(std::isnan(s.amax_value()));
}

// What the skinny kernel refuses, each by its message (the others run it).
TEST(GemmAmaxSkinnySim, RefusalsNameTheRule) {
  const runtime::Device device = runtime::Device::sim();
  auto refusals = [&](GemmAmaxCase c) {
    std::mt19937 rng(1600);
    auto s = make_gemm_amax(device, c, rng);
    std::vector<std::string> refused;
    const auto p = describe_gemm_amax(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                                      s.options(), refused);
    std::string all;
    for (const auto& why : skinny_gemm_amax_path().refusals(p, device)) all += why + "\n";
    return all;
  };
  auto expect_refused = [&](GemmAmaxCase c, const std::string& text) {
    const std::string why = refusals(c);
    EXPECT_NE(why.find(text), std::string::npos) << c.describe() << ":\n" << why;
  };
  expect_refused(skinny_case(kSkinnyFormats[0], 129, 24, 128, DType::f32), "M 129: the skinny kernel takes M <= 128");
  expect_refused(skinny_case(kSkinnyFormats[0], 8, 24, 96, DType::f32),
                 "K 96: the skinny kernel takes K a multiple of 128 (its chunk of a row)");
  expect_refused(skinny_case(kSkinnyFormats[2], 8, 24, 64, DType::f32),
                 "K 64: the skinny kernel takes K a multiple of 128 (its chunk of a row)");
  expect_refused(skinny_case(kSkinnyFormats[3], 8, 24, 128, DType::e4m3),
                 "C is e4m3; the skinny kernel writes f32, bf16 or f16 C");
  GemmAmaxCase c = skinny_case(kSkinnyFormats[0], 8, 24, 128, DType::f32);
  c.a_k_major = false;
  expect_refused(c, "A is not K-major");
  c = skinny_case(kSkinnyFormats[0], 8, 24, 128, DType::f32);
  c.tile = GemmAmaxTile{64, 64};
  expect_refused(c, "mma tile 64x64: the skinny kernel has no mma tile option");
  EXPECT_EQ(refusals(skinny_case(kSkinnyFormats[0], 8, 24, 128, DType::f32)), "");
}

}  // namespace
}  // namespace warpforge::ops::testing
