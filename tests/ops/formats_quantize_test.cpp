// ops/quantize.hpp: block scales from the block amax (OCP MX / NVFP4),
// round trip error within the element format's precision, padding 0.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "warpforge/error.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/quantize.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

std::vector<float> random_matrix(std::int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = normal(rng);
  return x;
}

// Relative precision of the element format's normals: half an ulp.
float half_ulp(DType t) {
  return t == DType::e4m3 ? 1.0f / 16 : t == DType::e5m2 ? 1.0f / 8 : 1.0f / 4;
}

TEST(Quantize, EveryFormatRoundTripsWithinItsPrecisionAndPutsTheBlockAmaxOnTop) {
  std::mt19937 rng(11);
  const std::int64_t rows = 37, k = 96, batches = 2;
  for (const BlockScaledFormat& f : {kMxfp8E4m3, kMxfp8E5m2, kMxfp4, kNvfp4}) {
    const auto x = random_matrix(rows * k * batches, rng);
    const QuantizedMatrix q = quantize(x, rows, k, batches, f);
    ASSERT_EQ(q.scales.size(), static_cast<std::size_t>(q.scale_layout().bytes()));
    ASSERT_EQ(q.data.size(),
              static_cast<std::size_t>(f.data == DType::e2m1 ? x.size() / 2 : x.size()));
    for (std::int64_t l = 0; l < batches; ++l)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t kb = 0; kb * f.vec < k; ++kb) {
          float amax = 0.0f;
          for (int i = 0; i < f.vec; ++i)
            amax = std::max(
                amax, std::fabs(x[static_cast<std::size_t>((l * rows + r) * k + kb * f.vec + i)]));
          const float scale = q.scale(r, kb * f.vec, l);
          if (f.scale == DType::e8m0) {
            // OCP MX 6.3: amax / X lies in [2^emax, 2^(emax+1)).
            const float top = f.data == DType::e4m3   ? 256.0f
                              : f.data == DType::e5m2 ? 32768.0f
                                                      : 4.0f;
            EXPECT_GE(amax / scale, top);
            EXPECT_LT(amax / scale, 2 * top);
          } else {
            EXPECT_EQ(scale, round_to(DType::e4m3, amax / 6.0f));
          }
          for (int i = 0; i < f.vec; ++i) {
            const std::int64_t kk = kb * f.vec + i;
            const float v = x[static_cast<std::size_t>((l * rows + r) * k + kk)];
            const float got = q.value(r, kk, l);
            // Saturation at the top (e4m3 448 of up to 512 scale units, e5m2 57344 of 65536, e2m1 6
            // of 8) and the subnormal step at the bottom bound the error by a fraction of the block
            // amax.
            const float step = amax * (f.data == DType::e2m1 ? 0.5f : 0.25f);
            EXPECT_NEAR(got, v, std::max(std::fabs(v) * half_ulp(f.data), step) + 1e-6f)
                << runtime::name(f.data) << "/" << f.vec << " at " << r << "," << kk;
          }
        }
  }
}

TEST(Quantize, ZeroBlocksGetScaleOneAndNaNBlocksANaNScale) {
  std::vector<float> x(64, 0.0f);
  x[40] = std::numeric_limits<float>::quiet_NaN();
  const auto q = quantize(x, 1, 64, 1, kMxfp8E4m3);
  EXPECT_EQ(q.scale(0, 0, 0), 1.0f);
  EXPECT_TRUE(std::isnan(q.scale(0, 32, 0)));
  const auto n = quantize(x, 1, 64, 1, kNvfp4);
  EXPECT_EQ(n.scale(0, 0, 0), 1.0f);
  EXPECT_TRUE(std::isnan(n.scale(0, 32, 0)));
  // Padding of the 128x4 layout stays 0.
  std::int64_t nonzero = 0;
  for (auto s : q.scales) nonzero += s != 0;
  EXPECT_EQ(nonzero, 2);
}

TEST(Quantize, Refusals) {
  std::vector<float> x(6, 1.0f);
  try {
    quantize(x, 2, 3, 1, {DType::bf16, DType::f32, 8});
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(),
                 "quantize refused: data dtype bf16 (accepted e4m3, e5m2, e2m1); scale dtype f32 "
                 "(accepted e8m0, e4m3); vec 8 (accepted 16, 32)");
  }
  try {
    quantize(x, 2, 3, 1, kMxfp4);
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(), "quantize refused: K 3 with e2m1 data (two per byte: K must be even)");
  }
  try {
    quantize(x, 2, 4, 1, kMxfp8E4m3);
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(), "quantize refused: 6 values given for rows 2 x K 4 x batches 1");
  }
}

}  // namespace
}  // namespace warpforge::ops
