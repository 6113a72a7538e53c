// The sm90a GemmAmax kernel (TMA raw loads, dequantizer warpgroups or, for
// MXFP8, FP8 wgmma on the codes, wgmma consumers) on the simulator against
// the CPU reference: MXFP8 e4m3 and
// e5m2 and FP4 with every scale format into every C dtype it writes, both C major-nesses, M, N, K that are
// not multiples of the 128 x 128 x 64 tile, L = 1 and 3, more tiles than the
// simulator's SMs (the persistent loop carries its pipeline phases across
// tiles), and the NaN rule of amax. Each case first asserts that GemmAmax
// chooses the sm90a path for it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "../../src/ops/gemm_amax/gemm_amax_path.hpp"
#include "gemm_amax_test_support.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

// A case's tensors on `device` and its problem, which the sm90a path must take.
std::pair<GemmAmaxSetup, GemmAmaxProblem> make_sm90a_on(const runtime::Device& device, const GemmAmaxCase& c,
                                                        std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto s = make_gemm_amax(device, c, rng);
  std::vector<std::string> refused;
  const auto p = describe_gemm_amax(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view,
                                    s.options(), refused);
  for (const auto& why : sm90a_gemm_amax_path().refusals(p, device)) refused.push_back(why);
  std::string all;
  for (const auto& why : refused) all += "\n  " + why;
  EXPECT_TRUE(refused.empty()) << c.describe() << ": not the sm90a path's:" << all;
  return {std::move(s), p};
}

GemmAmaxSetup make_sm90a(const GemmAmaxCase& c, std::uint32_t seed) {
  return make_sm90a_on(runtime::Device::sim(), c, seed).first;
}

void expect_sm90a_pass(const GemmAmaxCase& c, std::uint32_t seed) {
  auto s = make_sm90a(c, seed);
  const auto bad = run_gemm_amax_and_check(s);
  std::string all;
  for (std::size_t i = 0; i < bad.size() && i < 10; ++i) all += "\n  " + bad[i];
  EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches" << all;
}


// The sm90a kernel, named: small M would otherwise run on the skinny one.
// MXFP8 at tiles narrower than 128 x 256 runs FP8 wgmma, which only
// precision fast allows (the simulator computes it exactly).
GemmAmaxCase sm90a_case(DType ab, DType c_dtype) {
  GemmAmaxCase c;
  c.ab = ab, c.c = c_dtype, c.tile = std::nullopt, c.kernel = GemmAmaxKernel::sm90a;
  if (ab != DType::e2m1) c.precision = GemmAmaxPrecision::fast;
  return c;
}

TEST(GemmAmaxSm90aSim, Mxfp8IntoEveryCDtypeAndMajorness) {
  int i = 0;
  for (DType ab : {DType::e4m3, DType::e5m2})
    for (DType c_dtype : {DType::f32, DType::bf16, DType::f16}) {
      GemmAmaxCase c = sm90a_case(ab, c_dtype);
      c.c_major = i % 2 ? CMajor::m : CMajor::n;
      // An odd N leaves n-major C's last column without its pair.
      c.m = 136, c.n = i < 3 ? 72 : 71, c.k = 96, c.l = i % 3 == 0 ? 3 : 1;
      expect_sm90a_pass(c, 700 + static_cast<std::uint32_t>(i));
      ++i;
    }
}

// MXFP8 runs as FP8 wgmma on the codes, its scales turned into f32 per
// stage: square problems (A's and B's scales in the same shapes, laid out
// differently for the consumers), both tile widths, K past several stages
// of 128 codes with a ragged last one, scales across the whole e8m0 range.
TEST(GemmAmaxSm90aSim, Mxfp8SquareProblemsAndLongK) {
  int i = 0;
  for (DType ab : {DType::e4m3, DType::e5m2})
    for (int tile_n : {128, 64}) {
      GemmAmaxCase c = sm90a_case(ab, i % 2 ? DType::bf16 : DType::f32);
      c.m = c.n = 200, c.k = 416, c.l = i == 0 ? 2 : 1;
      c.tile = GemmAmaxTile{128, tile_n};
      expect_sm90a_pass(c, 720 + static_cast<std::uint32_t>(i));
      ++i;
    }
}

// The FP8 wgmma design under the simulator's race check (wgmma's shared
// reads included), several stages a tile and two tiles a CTA: one thread
// frees a stage after its warp's last wait, so every warp's reads of the
// stage's scales must precede its wgmma, whose completion needs all four.
TEST(GemmAmaxSm90aSim, Fp8WgmmaFreesAStageAfterEveryWarpsReads) {
  const runtime::Device checked(sim::make_backend({.worker_threads = 2, .sm_count = 1, .check_shared_races = true}));
  GemmAmaxCase c = sm90a_case(DType::e4m3, DType::f32);
  c.m = 200, c.n = 64, c.k = 416, c.tile = GemmAmaxTile{128, 64};
  auto s = make_sm90a_on(checked, c, 760).first;
  const auto bad = run_gemm_amax_and_check(s);
  EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches";
}

// FP4 (e2m1) with each scale format the rules allow: MXFP4 (e8m0/32),
// NVFP4 (e4m3/16) and e8m0/16, K tails of 32 and 16 codes.
TEST(GemmAmaxSm90aSim, Fp4WithEveryScaleFormat) {
  struct Scales {
    DType sf;
    int vec;
  };
  int i = 0;
  for (Scales sc : {Scales{DType::e8m0, 32}, Scales{DType::e4m3, 16}, Scales{DType::e8m0, 16}})
    for (DType c_dtype : {DType::f32, DType::bf16}) {
      GemmAmaxCase c = sm90a_case(DType::e2m1, c_dtype);
      c.sf = sc.sf, c.vec = sc.vec;
      c.c_major = i % 2 ? CMajor::m : CMajor::n;
      c.m = 136, c.n = 72, c.k = i % 2 ? 96 : 160, c.l = i % 3 == 0 ? 3 : 1;
      expect_sm90a_pass(c, 720 + static_cast<std::uint32_t>(i));
      ++i;
    }
}

// 2 x 2 tiles x 3 batches over the simulator's few SMs, and 3 k-blocks with
// a K tail of 16 (inside the last 32-element scale block).
TEST(GemmAmaxSm90aSim, ManyTilesPerCtaAndATail) {
  GemmAmaxCase c = sm90a_case(DType::e4m3, DType::bf16);
  c.m = 150, c.n = 140, c.k = 176, c.l = 3;
  expect_sm90a_pass(c, 750);
  c.tile = GemmAmaxTile{128, 128};  // the explicit tile is the default one
  c.l = 1;
  expect_sm90a_pass(c, 751);
}

// 128 x 64 tiles (the default where 128-column tiles would leave SMs idle
// but are too many to split along K): B tiles take half of a 128-row scale
// piece. Every format, a ragged N, two batches.
TEST(GemmAmaxSm90aSim, NarrowTilesForEveryFormat) {
  int i = 0;
  for (ScaledFormat f : {ScaledFormat{DType::e4m3, DType::e8m0, 32}, ScaledFormat{DType::e5m2, DType::e8m0, 32},
                         ScaledFormat{DType::e2m1, DType::e8m0, 32}, ScaledFormat{DType::e2m1, DType::e4m3, 16}}) {
    GemmAmaxCase c = sm90a_case(f.ab, i % 2 ? DType::bf16 : DType::f32);
    c.sf = f.sf, c.vec = f.vec, c.m = 130, c.n = 200, c.k = 128, c.l = 2;
    c.tile = GemmAmaxTile{128, 64};
    expect_sm90a_pass(c, 800 + static_cast<std::uint32_t>(i++));
  }
}

// One GemmAmax run on other tensors of the same description reads those:
// its tensor maps follow the addresses (they are re-encoded when any of
// A, B, SFA, SFB moves, and only then).
TEST(GemmAmaxSm90aSim, ExecuteOnOtherTensorsReadsThem) {
  GemmAmaxCase c = sm90a_case(DType::e4m3, DType::f32);
  c.m = 130, c.n = 72, c.k = 128;
  const runtime::Device sim = runtime::Device::sim();
  std::mt19937 rng(820);
  auto first = make_gemm_amax(sim, c, rng), second = make_gemm_amax(sim, c, rng);
  GemmAmax op(*first.a.view, *first.b.view, *first.sfa.view, *first.sfb.view, *first.out.view, *first.amax.view,
              first.options());
  for (GemmAmaxSetup* s : {&first, &second, &first, &second}) {
    const auto bad = run_gemm_amax_and_check(*s, 0.0f, &op);
    EXPECT_TRUE(bad.empty()) << (s == &first ? "first: " : "second: ") << (bad.empty() ? "" : bad.front());
  }
}

// amax folds into what the caller put there: a larger initial value stays.
TEST(GemmAmaxSm90aSim, AmaxExtendsTheCallersValue) {
  auto s = make_sm90a(sm90a_case(DType::e4m3, DType::f32), 760);
  const auto bad = run_gemm_amax_and_check(s, 1e6f);
  EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad.front());
  EXPECT_EQ(s.amax_value(), 1e6f);
}

// A NaN scale (e8m0 0xFF) or NaN data (e4m3 S.1111.111) makes the affected
// row or column of C NaN and amax NaN. The NaN sits in the second batch, in
// a row and column whose tile also holds elements past M and N, which must
// not count (B's zero-filled rows times A's NaN are NaN in the accumulator).
TEST(GemmAmaxSm90aSim, NaNInAnInputMakesAmaxNaN) {
  // FP8 wgmma on the codes (the default tile here) and the converting
  // warpgroups (128 x 256), whose fast path has no NaN: NaN codes (e4m3
  // S.1111.111, e5m2 S.11111.10) must send their K block the exact way.
  for (auto tile : {std::optional<GemmAmaxTile>{}, std::optional<GemmAmaxTile>{GemmAmaxTile{128, 256}}})
  for (int kind = 0; kind < 3; ++kind) {
    const bool in_scale = kind == 0;
    GemmAmaxCase c = sm90a_case(kind == 2 ? DType::e5m2 : DType::e4m3, DType::bf16);
    c.m = 40, c.n = 24, c.k = 64, c.l = 2, c.tile = tile;
    auto s = make_sm90a(c, 770);
    if (in_scale)
      s.sfa.bytes[static_cast<std::size_t>(ScaleFactorLayout{c.m, c.k, c.l, c.vec}.offset(17, 1, 1))] = 0xFF;
    else
      s.a.bytes[static_cast<std::size_t>(5 * s.a.stride_row + 3 + s.a.stride_batch)] = kind == 2 ? 0x7E : 0x7F;
    s.upload(in_scale ? s.sfa : s.a);
    const auto bad = run_gemm_amax_and_check(s);
    EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad.front());
    EXPECT_TRUE(std::isnan(s.amax_value()));
    int nans = 0;
    for (float v : s.c_values()) nans += std::isnan(v);
    EXPECT_EQ(nans, c.n);  // one row of C in batch 1
  }
}

// NVFP4's e4m3 scales have a NaN too (S.1111.111).
TEST(GemmAmaxSm90aSim, NaNE4m3ScaleMakesAmaxNaN) {
  GemmAmaxCase c = sm90a_case(DType::e2m1, DType::f32);
  c.sf = DType::e4m3, c.vec = 16, c.m = 40, c.n = 24, c.k = 64;
  auto s = make_sm90a(c, 775);
  s.sfb.bytes[static_cast<std::size_t>(ScaleFactorLayout{c.n, c.k, c.l, c.vec}.offset(9, 2, 0))] = 0x7F;
  s.upload(s.sfb);
  const auto bad = run_gemm_amax_and_check(s);
  EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad.front());
  EXPECT_TRUE(std::isnan(s.amax_value()));
  int nans = 0;
  for (float v : s.c_values()) nans += std::isnan(v);
  EXPECT_EQ(nans, c.m);  // column 9 of C
}

// Only elements of C count toward amax: an e5m2 infinity in A makes its
// row of C +-inf, but past N (B's zero fill) the accumulator holds inf x 0 =
// NaN, which must not turn amax into NaN.
TEST(GemmAmaxSm90aSim, ElementsPastNDoNotCount) {
  GemmAmaxCase c = sm90a_case(DType::e5m2, DType::f32);
  c.m = 20, c.n = 12, c.k = 64;
  auto s = make_sm90a(c, 780);
  EXPECT_EQ(amax_with_infinity_in_a(s), INFINITY);
}

// Subnormal FP8 codes land on bf16 subnormals before the bias multiply,
// which must keep them: a row of A made of them alone (with either sign)
// gives a row of C that flushing would zero, far outside the tolerance.
TEST(GemmAmaxSm90aSim, SubnormalCodesAreExact) {
  for (DType ab : {DType::e4m3, DType::e5m2}) {
    GemmAmaxCase c = sm90a_case(ab, DType::f32);
    c.m = 20, c.n = 16, c.k = 128;
    auto s = make_sm90a(c, 795);
    const int subnormals = ab == DType::e4m3 ? 7 : 3;  // mantissa codes 1.. of exponent 0
    for (std::int64_t k = 0; k < c.k; ++k)
      s.a.bytes[static_cast<std::size_t>(3 * s.a.stride_row + k)] =
          static_cast<std::uint8_t>((k % subnormals + 1) | (k % 3 == 0 ? 0x80 : 0));
    // B's row 5 holds 1.0 (e4m3 0x38, e5m2 0x3C) so C[3, 5] is the row's sum alone.
    for (std::int64_t k = 0; k < c.k; ++k)
      s.b.bytes[static_cast<std::size_t>(5 * s.b.stride_row + k)] = ab == DType::e4m3 ? 0x38 : 0x3C;
    s.upload(s.a);
    s.upload(s.b);
    const auto bad = run_gemm_amax_and_check(s);
    EXPECT_TRUE(bad.empty()) << c.describe() << ": " << (bad.empty() ? "" : bad.front());
    EXPECT_NE(s.c_values()[3 * 16 + 5], 0.0f);
  }
}

// Scales whose exponent leaves no room to fold the format's bias into them
// (e8m0 2^8 with e4m3 data, 2^16 with e5m2, 2^2 with e2m1; e4m3 448 for
// NVFP4) take the two-multiply path, the rest the folded one; both exact,
// mixed in one tile. B's scales shrink by as much, so C stays where amax's
// absolute tolerance (0.1) is meaningful.
TEST(GemmAmaxSm90aSim, LargeAndSmallScalesConvertExactly) {
  struct Format {
    DType ab, sf;
    int vec;
    std::uint8_t large, small;
  };
  for (const Format& f : {Format{DType::e4m3, DType::e8m0, 32, 135, 119}, Format{DType::e5m2, DType::e8m0, 32, 143, 111},
                          Format{DType::e2m1, DType::e8m0, 32, 129, 125}, Format{DType::e2m1, DType::e4m3, 16, 0x7E, 0x08}}) {
    GemmAmaxCase c = sm90a_case(f.ab, DType::f32);
    c.sf = f.sf, c.vec = f.vec, c.m = 40, c.n = 24, c.k = 128;
    auto s = make_sm90a(c, 790);
    const ScaleFactorLayout la{c.m, c.k, c.l, c.vec}, lb{c.n, c.k, c.l, c.vec};
    for (std::int64_t r = 0; r < c.m; ++r)
      for (std::int64_t kb = 0; kb < la.k_blocks(); ++kb)
        if ((r + kb) % 3 == 0) s.sfa.bytes[static_cast<std::size_t>(la.offset(r, kb, 0))] = f.large;
    for (std::int64_t r = 0; r < c.n; ++r)
      for (std::int64_t kb = 0; kb < lb.k_blocks(); ++kb) s.sfb.bytes[static_cast<std::size_t>(lb.offset(r, kb, 0))] = f.small;
    s.upload(s.sfa);
    s.upload(s.sfb);
    const auto bad = run_gemm_amax_and_check(s);
    EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches; " << (bad.empty() ? "" : bad.front());
    EXPECT_GT(s.amax_value(), 1.0f) << c.describe();  // not all lost to the small scales
  }
}

// A scale folds into one multiply when scale x 2^u (u: 126 for E2M1 codes,
// 120 for e4m3, 112 for e5m2) is a normal bf16 the kernel builds from the
// byte (e4m3 scales: S = 0 and E in 1..8; e8m0: E <= 254 - u); the rest go
// the two-multiply way. Each of B's rows takes one scale byte at or beside
// those bounds (A's scales 1), so a wrong factor shows in whole columns of
// C; 128 x 256 (converting warpgroups) and 128 x 128 (FP4's dequantizer
// warpgroup, MXFP8's FP8 wgmma).
TEST(GemmAmaxSm90aSim, ScalesFoldOnlyWithinTheirBounds) {
  struct Format {
    DType ab, sf;
    int vec;
    std::uint8_t one;
    std::vector<std::uint8_t> b_scales;
  };
  const runtime::Device device(sim::make_backend({.sm_count = 2}));
  int i = 0;
  for (const Format& f : {Format{DType::e2m1, DType::e4m3, 16, 0x38, {0x47, 0x48, 0x08, 0x07, 0x01, 0x00, 0x38, 0x50}},
                          Format{DType::e2m1, DType::e8m0, 32, 127, {128, 129, 0, 1, 126, 140}},
                          Format{DType::e4m3, DType::e8m0, 32, 127, {134, 135, 0, 1, 120, 140}},
                          Format{DType::e5m2, DType::e8m0, 32, 127, {142, 143, 0, 2, 112, 150}}})
    for (int tile_n : {256, 128}) {
      // MXFP8 at 128 x 128 runs FP8 wgmma, which the simulator now adds as
      // the H100 does, in 13 bits (src/sim/tensor_core_sum.hpp): with scales
      // 2^±23 apart its sums fail this test's 1% tolerance on the simulator
      // as on the GPU, so the scale folding is checked there by the
      // 128 x 256 (converting) tile only.
      if (f.ab != DType::e2m1 && tile_n == 128) continue;
      GemmAmaxCase c = sm90a_case(f.ab, DType::f32);
      c.sf = f.sf, c.vec = f.vec, c.m = 130, c.n = 72, c.k = 128;
      c.tile = GemmAmaxTile{128, tile_n};
      std::mt19937 rng(880 + static_cast<std::uint32_t>(i++));
      auto s = make_gemm_amax(device, c, rng);
      const ScaleFactorLayout la{c.m, c.k, c.l, c.vec}, lb{c.n, c.k, c.l, c.vec};
      for (std::int64_t r = 0; r < c.m; ++r)
        for (std::int64_t kb = 0; kb < la.k_blocks(); ++kb) s.sfa.bytes[static_cast<std::size_t>(la.offset(r, kb, 0))] = f.one;
      for (std::int64_t r = 0; r < c.n; ++r)
        for (std::int64_t kb = 0; kb < lb.k_blocks(); ++kb)
          s.sfb.bytes[static_cast<std::size_t>(lb.offset(r, kb, 0))] = f.b_scales[static_cast<std::size_t>(r) % f.b_scales.size()];
      s.upload(s.sfa);
      s.upload(s.sfb);
      GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
      const auto bad = run_gemm_amax_and_check(s, 0.0f, &op);
      EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches; " << (bad.empty() ? "" : bad.front());
    }
}

// The 128x4 layout pads SFA and SFB to 128-row, 4-block tiles, and the
// kernel loads whole 512-byte pieces of it; no padding byte may reach C.
// With every padding byte 0xFF (NaN in e8m0 and e4m3), partial row tiles of
// A and B and a K that ends inside a stage (the last K block's trailing scale
// blocks are padding) still match the reference.
TEST(GemmAmaxSm90aSim, NaNScalePaddingStaysOutOfC) {
  int i = 0;
  for (ScaledFormat f : {ScaledFormat{DType::e4m3, DType::e8m0, 32}, ScaledFormat{DType::e2m1, DType::e8m0, 32},
                         ScaledFormat{DType::e2m1, DType::e4m3, 16}}) {
    GemmAmaxCase c = sm90a_case(f.ab, DType::f32);
    c.sf = f.sf, c.vec = f.vec, c.m = 130, c.n = 72, c.k = 96;
    auto s = make_sm90a(c, 830 + static_cast<std::uint32_t>(i++));
    for (auto [t, rows] : {std::pair{&s.sfa, c.m}, std::pair{&s.sfb, c.n}}) {
      const ScaleFactorLayout layout{rows, c.k, c.l, c.vec};
      int padding = 0;
      for (std::int64_t o = 0; o < layout.bytes(); ++o)
        if (layout.coordinate(o).padding) t->bytes[static_cast<std::size_t>(o)] = 0xFF, ++padding;
      ASSERT_GT(padding, 0);
      s.upload(*t);
    }
    const auto bad = run_gemm_amax_and_check(s);
    EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches; " << (bad.empty() ? "" : bad.front());
    EXPECT_FALSE(std::isnan(s.amax_value())) << c.describe();
  }
}

// With at most half as many output tiles as SMs (the decode shape M = 128
// on a GPU), each tile's K is split in ranges on two or four CTAs, the
// later ones publishing their sums through the workspace for the first to
// add before the epilogue: every format, ragged M, N and K (5 K blocks
// split in two, unevenly: four splits would leave one empty), L = 2. A
// second run on the same object (its flags must have been left clear)
// gives the same C, bit for bit.
TEST(GemmAmaxSm90aSim, SplitKWhereTilesAreFew) {
  const runtime::Device device(sim::make_backend({.sm_count = 16}));
  struct Format {
    DType ab, sf;
    int vec;
    std::int64_t k;
    DType c;
    int splits;
  };
  int i = 0;
  for (Format f : {Format{DType::e4m3, DType::e8m0, 32, 416, DType::bf16, 4},
                   Format{DType::e2m1, DType::e8m0, 32, 320, DType::f32, 2},
                   Format{DType::e2m1, DType::e4m3, 16, 224, DType::f16, 4}}) {
    GemmAmaxCase c = sm90a_case(f.ab, f.c);
    c.sf = f.sf, c.vec = f.vec, c.m = 130, c.n = 200, c.k = f.k, c.l = i == 1 ? 2 : 1;
    auto [s, p] = make_sm90a_on(device, c, 840 + static_cast<std::uint32_t>(i++));
    ASSERT_EQ(sm90a_gemm_amax_tiling(p, device).splits, f.splits) << c.describe();
    GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
    auto bad = run_gemm_amax_and_check(s, 0.0f, &op);
    EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches; " << (bad.empty() ? "" : bad.front());
    const std::vector<float> first = s.c_values();
    bad = run_gemm_amax_and_check(s, 0.0f, &op);
    EXPECT_TRUE(bad.empty()) << c.describe() << ", second run: " << (bad.empty() ? "" : bad.front());
    const std::vector<float> second = s.c_values();
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0) << c.describe();
  }
}

// 128 x 256 tiles on the converting warpgroups in clusters of `cluster_m`
// CTAs along M, on `device`: every format (FP4 with each scale format,
// MXFP8 e4m3 and e5m2) into every C dtype, both C majors, ragged N and K,
// two batches; `m(i)` gives case i's M. N is one tile's: 200 (its second
// 128 rows ragged) or 104 (its first ragged, its second wholly past N, the
// half of B a cluster's rank 1 converts). Each format's f32 case runs twice on one object.
void wide_tiles_in_every_format(const runtime::Device& device, int cluster_m, std::int64_t (*m)(int),
                                std::uint32_t seed) {
  int i = 0;
  for (ScaledFormat f : {ScaledFormat{DType::e2m1, DType::e8m0, 32}, ScaledFormat{DType::e2m1, DType::e4m3, 16},
                         ScaledFormat{DType::e2m1, DType::e8m0, 16}, ScaledFormat{DType::e4m3, DType::e8m0, 32},
                         ScaledFormat{DType::e5m2, DType::e8m0, 32}})
    for (DType c_dtype : {DType::f32, DType::bf16, DType::f16}) {
      GemmAmaxCase c = sm90a_case(f.ab, c_dtype);
      c.sf = f.sf, c.vec = f.vec, c.m = m(i), c.n = i % 2 ? 104 : 200, c.k = i % 3 == 0 ? 160 : 208, c.l = 2;
      c.c_major = i % 2 ? CMajor::m : CMajor::n;
      c.tile = GemmAmaxTile{128, 256}, c.cluster = GemmAmaxTile{cluster_m, 1};
      auto [s, p] = make_sm90a_on(device, c, seed + static_cast<std::uint32_t>(i++));
      const Sm90aGemmAmaxTiling t = sm90a_gemm_amax_tiling(p, device);
      ASSERT_TRUE(t.tile_n == 256 && t.dequant_warpgroups == 0 && !t.fp8_mma && t.splits == 1 &&
                  t.cluster_m == cluster_m)
          << c.describe();
      GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
      // Executed again (C and amax poisoned anew) in each format's f32 case:
      // cases 0, 3, 6, 9, 12, so both C majors and both M of the cluster
      // test; what a second execute could get wrong is the op's, not the C
      // dtype's.
      for (int run = 0; run < (c_dtype == DType::f32 ? 2 : 1); ++run) {
        const auto bad = run_gemm_amax_and_check(s, 0.0f, &op);
        EXPECT_TRUE(bad.empty()) << c.describe() << ", run " << run << ": " << bad.size() << " mismatches; "
                                 << (bad.empty() ? "" : bad.front());
      }
    }
}

// Three converting warpgroups (the consumers and the helper, whose first
// thread keeps the raw stages loaded) without clusters (FP8's default is
// 2x1) on a 2-SM simulator, so each CTA walks several units.
TEST(GemmAmaxSm90aSim, WideTilesOnThreeConvertingWarpgroups) {
  wide_tiles_in_every_format(runtime::Device(sim::make_backend({.sm_count = 2})), 1, [](int) -> std::int64_t { return 200; },
                             860);
}

// In 2-CTA clusters (cluster 2x1): each CTA converts A and half of B, the
// copy engine sends its B rows into its partner's shared memory; a 4-SM
// simulator (two clusters, one or two units each), M with an odd number
// of 128-row tiles (300: the last cluster's rank 1 past M) or an even one
// (200: one pair, its rank 1 ragged).
TEST(GemmAmaxSm90aSim, ClusterPairsShareTheConversionOfB) {
  wide_tiles_in_every_format(runtime::Device(sim::make_backend({.sm_count = 4})), 2,
                             [](int i) -> std::int64_t { return i % 2 ? 300 : 200; }, 900);
}

// The default tiling on a 132-SM device: 128 x 256 (converting
// warpgroups; FP8 data in 2-CTA clusters, FP4 not, as measured) where those
// tiles fill the SMs, and 128 x 128 with K in two ranges at the decode shape
// (M = 128: 64 tiles; FP4 a dequantizer warpgroup, MXFP8 FP8 wgmma where
// precision fast allows it).
TEST(GemmAmaxSm90aSim, DefaultTilingOnAHopperSizedDevice) {
  const runtime::Device device(sim::make_backend({.sm_count = 132}));
  auto tiling = [&](DType ab, std::int64_t m, std::int64_t n, std::int64_t k,
                    GemmAmaxPrecision precision = GemmAmaxPrecision::exact) {
    GemmAmaxProblem p;
    p.m = m, p.n = n, p.k = k, p.l = 1, p.ab_dtype = ab, p.c_dtype = DType::bf16, p.precision = precision;
    p.sf_dtype = ab == DType::e2m1 ? DType::e4m3 : DType::e8m0, p.vec = ab == DType::e2m1 ? 16 : 32;
    return sm90a_gemm_amax_tiling(p, device);
  };
  Sm90aGemmAmaxTiling t = tiling(DType::e2m1, 8192, 8192, 8192);
  EXPECT_TRUE(t.tile_n == 256 && t.dequant_warpgroups == 0 && t.splits == 1 && t.stages == 3 && t.cluster_m == 1);
  t = tiling(DType::e2m1, 128, 8192, 8192);
  EXPECT_TRUE(t.tile_n == 128 && t.dequant_warpgroups == 1 && t.splits == 2 && t.cluster_m == 1)
      << t.tile_n << " " << t.splits;
  t = tiling(DType::e4m3, 8192, 8192, 8192);
  EXPECT_TRUE(t.tile_n == 256 && !t.fp8_mma && t.dequant_warpgroups == 0 && t.raw_stages == 3 && t.cluster_m == 2);
  // Exact MXFP8 converts on the 128 x 256 warpgroups whatever the tile
  // count; FP8 wgmma (128 x 128, K in two) only with precision fast.
  t = tiling(DType::e4m3, 128, 8192, 8192);
  EXPECT_TRUE(t.tile_n == 256 && !t.fp8_mma && t.splits == 1) << t.tile_n << " " << t.splits;
  t = tiling(DType::e4m3, 128, 8192, 8192, GemmAmaxPrecision::fast);
  EXPECT_TRUE(t.tile_n == 128 && t.fp8_mma && t.splits == 2 && t.cluster_m == 1) << t.tile_n << " " << t.splits;
  // One 128-row tile of M has no partner: 1x1 (here 133 tiles of 128 x 256).
  t = tiling(DType::e4m3, 128, 133 * 256, 1024);
  EXPECT_TRUE(t.tile_n == 256 && t.cluster_m == 1) << t.tile_n << " " << t.cluster_m;
}

// GemmAmax names the kernel it chose: skinny for small M of E2M1 data (and
// of FP8 data where the swapped kernel refuses it), swapped past it, sm90a
// where that refuses (K no multiple of 64), sm80 for the rest (here an
// m-major A, and a 64 x 64 tile); describe() says why the kernels before
// it were passed over.
TEST(GemmAmaxSm90aSim, KernelNameSaysWhichPathRuns) {
  auto op_for = [](GemmAmaxCase c) {
    std::mt19937 rng(790);
    auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
    return GemmAmax(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  };
  auto name_for = [&](GemmAmaxCase c) { return std::string(op_for(c).kernel_name()); };
  GemmAmaxCase c = sm90a_case(DType::e4m3, DType::bf16);
  c.kernel = GemmAmaxKernel::automatic, c.precision = GemmAmaxPrecision::exact, c.k = 128, c.m = 1;
  EXPECT_EQ(name_for(c), "swapped");  // FP8 at every M up to the prepass path's
  EXPECT_NE(op_for(c).describe().find(
                "not skinny:\n  - e4m3 data: automatic selection takes the swapped kernel, faster at M = 1 and 16"),
            std::string::npos)
      << op_for(c).describe();
  GemmAmaxCase fp4 = c;
  fp4.ab = DType::e2m1, fp4.sf = DType::e4m3, fp4.vec = 16, fp4.m = 16;
  EXPECT_EQ(name_for(fp4), "skinny");  // E2M1 up to 16 tokens
  fp4.m = 17;
  EXPECT_EQ(name_for(fp4), "swapped");
  EXPECT_NE(op_for(fp4).describe().find("not skinny:\n  - M 17: automatic selection takes the skinny kernel up to M = 16"),
            std::string::npos)
      << op_for(fp4).describe();
  c.m = 17;
  c.m = 129, c.k = 160;
  EXPECT_EQ(name_for(c), "sm90a");
  const std::string why = op_for(c).describe();
  EXPECT_NE(why.find("kernel sm90a, 128x256 tiles, converting warpgroups"), std::string::npos) << why;
  EXPECT_NE(why.find("not skinny:\n  - M 129: the skinny kernel takes M <= 128"), std::string::npos) << why;
  EXPECT_NE(why.find("not swapped:\n  - K 160: the swapped kernel takes K a multiple of 64"), std::string::npos) << why;
  c.ab = DType::e4m3;
  c.a_k_major = false;
  EXPECT_EQ(name_for(c), "sm80");
  c.a_k_major = true, c.tile = GemmAmaxTile{64, 64};
  EXPECT_EQ(name_for(c), "sm80");
}

// Small M: E2M1 data goes to the skinny kernel, FP8 data to the swapped
// kernel, and to the skinny kernel only where the swapped kernel refuses
// the problem (here B shared by both batches, batch stride 0, which its
// TMA map cannot take).
TEST(GemmAmaxSm90aSim, SmallMGoesToTheSkinnyKernelForE2m1OrWhereTheSwappedKernelRefuses) {
  const runtime::Device device = runtime::Device::sim();
  GemmAmaxProblem p;
  p.m = 16, p.n = 200, p.k = 256, p.l = 2;
  p.ab_dtype = DType::e4m3, p.sf_dtype = DType::e8m0, p.c_dtype = DType::bf16, p.vec = 32;
  p.a = {256, 1, 16 * 256}, p.b = {256, 1, 200 * 256}, p.c = {200, 1, 16 * 200};
  const std::optional<std::string> over = skinny_gemm_amax_path().passed_over(p, device);
  ASSERT_TRUE(over.has_value());
  EXPECT_NE(over->find("e4m3 data: automatic selection takes the swapped kernel"), std::string::npos) << *over;
  EXPECT_FALSE(swapped_gemm_amax_path().passed_over(p, device).has_value());
  p.b.batch = 0;
  ASSERT_FALSE(swapped_gemm_amax_path().refusals(p, device).empty());
  ASSERT_TRUE(skinny_gemm_amax_path().refusals(p, device).empty());
  EXPECT_FALSE(skinny_gemm_amax_path().passed_over(p, device).has_value());
  p.b.batch = 200 * 256;
  p.ab_dtype = DType::e2m1, p.sf_dtype = DType::e4m3, p.vec = 16;
  EXPECT_FALSE(skinny_gemm_amax_path().passed_over(p, device).has_value());
  const std::optional<std::string> defers = swapped_gemm_amax_path().passed_over(p, device);
  ASSERT_TRUE(defers.has_value());
  EXPECT_NE(defers->find("M 16: automatic selection takes the skinny kernel up to M = 16 for e2m1 data"),
            std::string::npos)
      << *defers;
}

}  // namespace
}  // namespace warpforge::ops::testing
