// The sm80 GemmAmax kernel on the simulator against the CPU reference, over
// the combinations of the reference test (REFERENCE.md): MXFP8 in every
// A/B/C major-ness, FP4 with e8m0/32, e4m3/16 and e8m0/16 into every C
// dtype, L = 1 and 3, sizes that are not multiples of the tile.
#include <gtest/gtest.h>

#include <cmath>

#include "gemm_amax_test_support.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

void expect_pass(const GemmAmaxCase& c, std::uint32_t seed, float initial_amax = 0.0f) {
  std::mt19937 rng(seed);
  auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
  const auto bad = run_gemm_amax_and_check(s, initial_amax);
  std::string all;
  for (const auto& b : bad) all += "\n  " + b;
  EXPECT_TRUE(bad.empty()) << c.describe() << all;
}

TEST(GemmAmaxKernel, Mxfp8InEveryMajornessAndCDtype) {
  int i = 0;
  for (DType ab : {DType::e4m3, DType::e5m2})
    for (bool a_k : {true, false})
      for (bool b_k : {true, false})
        for (CMajor cm : {CMajor::n, CMajor::m})
          for (DType c_dtype : {DType::f32, DType::bf16, DType::f16}) {
            GemmAmaxCase c;
            c.ab = ab, c.a_k_major = a_k, c.b_k_major = b_k, c.c_major = cm, c.c = c_dtype;
            c.m = 33, c.n = 20, c.k = 80, c.l = i % 4 == 0 ? 3 : 1;
            expect_pass(c, 100 + static_cast<std::uint32_t>(i));
            ++i;
          }
}

TEST(GemmAmaxKernel, Fp4IntoEveryCDtype) {
  struct Scales {
    DType sf;
    int vec;
  };
  int i = 0;
  for (Scales s : {Scales{DType::e8m0, 32}, Scales{DType::e4m3, 16}, Scales{DType::e8m0, 16}})
    for (DType c_dtype :
         {DType::f32, DType::bf16, DType::f16, DType::e4m3, DType::e5m2, DType::e2m1}) {
      GemmAmaxCase c;
      c.ab = DType::e2m1, c.sf = s.sf, c.vec = s.vec, c.c = c_dtype;
      c.c_major = c_dtype == DType::e2m1 || i % 2 ? CMajor::n : CMajor::m;
      c.m = 36, c.n = 18, c.k = 72, c.l = i % 3 == 0 ? 3 : 1;
      expect_pass(c, 200 + static_cast<std::uint32_t>(i));
      ++i;
    }
}

// Several CTAs in M and N, a K tail, and each supported tile shape.
TEST(GemmAmaxKernel, ManyCtasAndTileShapes) {
  for (GemmAmaxTile tile : {GemmAmaxTile{32, 64}, GemmAmaxTile{64, 32}, GemmAmaxTile{128, 128}}) {
    GemmAmaxCase c;
    c.ab = DType::e4m3, c.c = DType::bf16, c.tile = tile;
    c.m = 136, c.n = 72, c.k = 48, c.l = 1;
    expect_pass(c, 300 + static_cast<std::uint32_t>(tile.m + tile.n));
  }
  // The default tile (64x64), every operand transposed, several batches, FP8 e5m2.
  GemmAmaxCase c;
  c.ab = DType::e5m2, c.c = DType::f16, c.tile = std::nullopt;
  c.a_k_major = false, c.b_k_major = false, c.c_major = CMajor::m;
  c.m = 130, c.n = 70, c.k = 64, c.l = 2;
  expect_pass(c, 350);
}

// amax folds into what the caller put there: a larger initial value stays.
TEST(GemmAmaxKernel, AmaxExtendsTheCallersValue) {
  GemmAmaxCase c;
  c.m = 20, c.n = 16, c.k = 32;
  expect_pass(c, 400, 1e6f);
}

// A NaN scale (e8m0 0xFF) or NaN data makes C's affected elements NaN and
// amax NaN: the atomic max on sign-cleared bits keeps a positive NaN above +inf.
TEST(GemmAmaxKernel, NaNInAnInputMakesAmaxNaN) {
  for (bool in_scale : {true, false}) {
    GemmAmaxCase c;
    c.m = 40, c.n = 24, c.k = 64, c.l = 2;
    std::mt19937 rng(500);
    auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
    if (in_scale)
      s.sfa.bytes[static_cast<std::size_t>(
          ScaleFactorLayout{c.m, c.k, c.l, c.vec}.offset(17, 1, 1))] = 0xFF;
    else
      s.b.bytes[static_cast<std::size_t>(5 * s.b.stride_row + 3 + 0 * s.b.stride_batch)] =
          0xFF;  // e4m3 NaN
    s.upload(in_scale ? s.sfa : s.b);
    const auto bad = run_gemm_amax_and_check(s);
    EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad.front());
    EXPECT_TRUE(std::isnan(s.amax_value()));
    const auto values = s.c_values();
    int nans = 0;
    for (float v : values) nans += std::isnan(v);
    EXPECT_EQ(nans, in_scale ? c.n : c.m);  // one row of C in batch 1, or one column in batch 0
  }
}

}  // namespace
}  // namespace warpforge::ops::testing

namespace warpforge::ops::testing {
namespace {

// gemm_amax() allocates C (FP4: u8 bytes (M, N/2, L), n-major) and sets amax to +0.0 itself.
TEST(GemmAmaxWrapper, AllocatesCAndInitialisesAmax) {
  GemmAmaxCase c;
  c.ab = DType::e2m1, c.c = DType::e2m1, c.m = 20, c.n = 32, c.k = 64, c.l = 2;
  std::mt19937 rng(600);
  auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
  const GemmAmaxResult r = gemm_amax(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, s.options());
  EXPECT_EQ(r.c.dtype(), DType::u8);
  EXPECT_EQ(r.c.shape(), (std::vector<std::int64_t>{20, 16, 2}));
  EXPECT_EQ(r.c.strides(), (std::vector<std::int64_t>{16, 1, 320}));
  std::vector<std::uint8_t> bytes(r.c.extent_bytes());
  runtime::TensorView(r.c.device(), r.c.address(), DType::u8,
                      {static_cast<std::int64_t>(bytes.size())})
      .copy_to_host(bytes.data(), bytes.size());
  float amax = -1.0f;
  r.amax.copy_to_host(&amax, 4);
  const GemmAmaxReference ref = gemm_amax_reference(s.host_a(), s.host_b());
  int bad = 0;
  for (std::int64_t l = 0; l < c.l; ++l)
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const float want = round_to(DType::e2m1, ref.at(i, j, l));
        const float got = decode(DType::e2m1, e2m1_at(bytes, (l * c.m + i) * c.n + j));
        bad += std::fabs(got - want) > 0.1f + 0.1f * std::fabs(want);
      }
  EXPECT_EQ(bad, 0);
  EXPECT_NEAR(amax, ref.amax, 0.1f);
  EXPECT_GT(ref.amax, 1.0f);
}

}  // namespace
}  // namespace warpforge::ops::testing
