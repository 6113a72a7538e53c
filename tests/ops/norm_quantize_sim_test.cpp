// RMSNorm + quantize on the simulator (norm_quantize_checks.hpp): every
// block-scaled format, bf16 and f32 inputs, the residual, rows that pad the
// 128x4 scale layout, strided rows, a row per cluster, more rows than are
// resident (8 vectors a thread), blocks holding NaN
// and values near the largest, quantizing without the norm; refusals.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "norm_quantize_checks.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/norm_quantize.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

constexpr BlockScaledFormat kQuantizedFormats[] = {kMxfp8E4m3, kMxfp8E5m2, kMxfp4, kNvfp4};

TEST(NormQuantizeSim, MarksteinQuotientIsTheRoundedDivision) {
  // The NVFP4 kernel divides by its e4m3 block scale d as q = x·r, then
  // q + (x - q·d)·r with r = 1/d rounded (norm_quantize_kernel.cpp): the
  // rounded quotient for every e4m3 divisor. Every x mantissa was checked
  // once (7.4e9 cases, about a minute); here every 61st, in two binades
  // (a binade of x scales the quotient exactly).
  std::int64_t cases = 0;
  for (int code = 1; code <= 0x7e; ++code) {
    const float d = decode(DType::e4m3, static_cast<std::uint8_t>(code)), r = 1.0f / d;
    for (std::uint32_t exponent : {127u, 200u})
      for (std::uint32_t mantissa = 0; mantissa < (1u << 23); mantissa += 61) {
        const float x = std::bit_cast<float>(exponent << 23 | mantissa);
        const float q = x * r;
        const float corrected = std::fma(std::fma(-q, d, x), r, q);
        ASSERT_EQ(corrected, x / d) << "x " << x << " d " << d;
        ++cases;
      }
  }
  EXPECT_GT(cases, 30'000'000);
}

TEST(NormQuantizeSim, Nvfp4TiesRoundToEven) {
  check_nvfp4_ties(sim());
}

TEST(NormQuantizeSim, EveryFormatIsQuantizeOfTheNorm) {
  std::uint32_t seed = 10;
  for (const BlockScaledFormat& f : kQuantizedFormats)
    for (DType x : {DType::bf16, DType::f32}) check_norm_quantize(sim(), {.format = f, .x = x}, seed++);
}

TEST(NormQuantizeSim, ResidualPaddedRowsStridesAndClusters) {
  check_norm_quantize(sim(), {.format = kNvfp4, .residual = true, .rows = 130, .k = 128}, 20);
  check_norm_quantize(sim(), {.format = kMxfp4, .weight = false, .rows = 3, .k = 512, .stride = 520}, 21);
  check_norm_quantize(sim(), {.rows = 2, .k = 40960}, 22, "cluster");
}

TEST(NormQuantizeSim, ManyRowsTakeEightVectorsAThread) {
  check_many_rows(sim());
}

TEST(NormQuantizeSim, NanBlocksAndValuesNearTheLargest) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const BlockScaledFormat& f : kQuantizedFormats) {
    // A NaN makes its row's y NaN: every block's scale NaN (0xFF, 0x7F).
    check_norm_quantize(sim(), {.format = f, .rows = 3}, 30, nullptr, [&](HostRows& x) { x.values[5] = nan; });
    // Without the norm, values near bf16's largest and a NaN in one block.
    check_norm_quantize(sim(), {.format = f, .weight = false, .normalize = false, .rows = 3}, 31, nullptr,
                        [&](HostRows& x) {
                          for (std::size_t i = 0; i < 64; ++i) x.values[i] = rounded(DType::bf16, 3.0e38f * (i % 2 ? -1.0f : 0.9f));
                          x.values[300] = nan;
                        });
    check_rows_past_the_plain_sum(sim(), f);
    check_tiny_blocks(sim(), f);
  }
}

TEST(NormQuantizeSim, Refusals) {
  const runtime::Device device = sim();
  runtime::Buffer scratch(device, 1 << 16);
  const runtime::TensorView x(device, scratch.address(), DType::bf16, {4, 96}),
      data(device, scratch.address(), DType::e4m3, {4, 96}), scales(device, scratch.address(), DType::e8m0, {512}),
      wrong(device, scratch.address(), DType::f16, {4, 96});
  auto said = [](const RmsNormQuantize& op, const char* what) {
    EXPECT_NE(op.describe().find(what), std::string::npos) << op.describe();
  };
  said(RmsNormQuantize({.x = x, .data = data, .scales = scales}), "K 96: a multiple of 4 x vec = 128");
  const runtime::TensorView x2(device, scratch.address(), DType::bf16, {4, 128}),
      data2(device, scratch.address(), DType::e4m3, {4, 128});
  said(RmsNormQuantize({.x = x2, .data = wrong, .scales = scales}), "data is f16[4, 96]");
  said(RmsNormQuantize({.x = x2, .data = data2, .scales = data2}), "scales are e4m3[4, 128]");
  said(RmsNormQuantize({.x = x2, .data = data2, .scales = scales}, {.format = {DType::f16, DType::e8m0, 32}}),
       "data format f16: accepted e4m3, e5m2, e2m1");
  EXPECT_TRUE(RmsNormQuantize({.x = x2, .data = data2, .scales = scales}).check_support().empty());
  EXPECT_THROW(RmsNormQuantize({.x = x, .data = data, .scales = scales}).compile(), OpsError);
}

}  // namespace
}  // namespace warpforge::ops::testing
