#include "norm_quantize_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/norm.hpp"
#include "warpforge/ops/norm_quantize.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops::testing {

using runtime::DType;
using runtime::TensorView;

namespace {

DeviceRows bytes_tensor(const runtime::Device& device, DType dtype, std::vector<std::int64_t> shape, std::size_t bytes) {
  auto buffer = std::make_shared<runtime::Buffer>(device, std::max<std::size_t>(bytes, 16));
  buffer->fill(0xA5);  // poison: every byte must be written
  TensorView view(*buffer, dtype, std::move(shape));
  return {buffer, runtime::Tensor(view, buffer)};
}

std::vector<std::uint8_t> bytes_of(const TensorView& v) {
  std::vector<std::uint8_t> b(v.extent_bytes());
  if (!b.empty()) v.copy_to_host(b.data(), b.size());
  return b;
}

std::string format_name(const BlockScaledFormat& f) {
  return std::string(runtime::name(f.data)) + "/" + std::string(runtime::name(f.scale)) + "/" + std::to_string(f.vec);
}

}  // namespace

void check_norm_quantize(const runtime::Device& device, const NormQuantizeCase& c, std::uint32_t seed,
                         const char* kernel, const std::function<void(HostRows&)>& shape_x) {
  SCOPED_TRACE("norm quantize " + format_name(c.format) + " " + std::to_string(c.rows) + "x" + std::to_string(c.k) +
               " " + std::string(runtime::name(c.x)) + (c.normalize ? "" : " (no norm)"));
  std::mt19937 rng(seed);
  HostRows x = random_rows(rng, c.x, c.rows, c.k, 2.0f);
  if (shape_x) shape_x(x);
  HostRows w = random_rows(rng, c.x, 1, c.k, 0.5f, 1.0f), r = random_rows(rng, c.x, c.rows, c.k);
  auto ux = upload(device, x, c.stride), uw = upload_vector(device, w), ur = upload(device, r);
  const bool fp4 = c.format.data == DType::e2m1;
  const std::int64_t cols = fp4 ? c.k / 2 : c.k;
  auto data = bytes_tensor(device, fp4 ? DType::u8 : c.format.data, {c.rows, cols}, static_cast<std::size_t>(c.rows * cols));
  const ScaleFactorLayout layout{c.rows, c.k, 1, c.format.vec};
  auto scales = bytes_tensor(device, c.format.scale, {layout.bytes()}, static_cast<std::size_t>(layout.bytes()));
  auto y = poisoned(device, DType::f32, c.rows, c.k), h = poisoned(device, c.x, c.rows, c.k);
  auto rstd = poisoned_vector(device, DType::f32, c.rows);
  NormQuantizeTensors t{.x = ux.view(), .data = data.view(), .scales = scales.view(), .y = y.view()};
  if (c.weight) t.weight = uw.view();
  if (c.residual) t.residual = ur.view(), t.residual_out = h.view();
  if (c.normalize) t.rstd = rstd.view();
  RmsNormQuantize op(t, {.format = c.format, .eps = 1e-6f, .normalize = c.normalize});
  ASSERT_TRUE(op.check_support().empty()) << op.describe();
  op.execute(t);
  if (kernel) EXPECT_EQ(op.kernel_name(), kernel) << op.describe();

  // The codes and scales are quantize()'s of the y written.
  const HostRows yv = download(y.view());
  const QuantizedMatrix q = quantize(yv.values, c.rows, c.k, 1, c.format);
  const auto got_data = bytes_of(data.view()), got_scales = bytes_of(scales.view());
  std::int64_t data_diff = 0, scale_diff = 0;
  for (std::size_t i = 0; i < q.data.size(); ++i) data_diff += q.data[i] != got_data[i];
  for (std::size_t i = 0; i < q.scales.size(); ++i) scale_diff += q.scales[i] != got_scales[i];
  EXPECT_EQ(data_diff, 0) << op.describe() << ": codes differ from quantize(y)";
  EXPECT_EQ(scale_diff, 0) << op.describe() << ": scales (padding included) differ from quantize(y)";

  if (!c.normalize) {  // y = x · weight, exactly
    for (std::int64_t i = 0; i < c.rows; ++i)
      for (std::int64_t j = 0; j < c.k; ++j) {
        const float want = c.weight ? x.at(i, j) * w.at(0, j) : x.at(i, j);
        ASSERT_TRUE(yv.at(i, j) == want || (std::isnan(want) && std::isnan(yv.at(i, j)))) << i << "," << j;
      }
    return;
  }
  // y is ops::Norm's y, bit for bit (the same row arithmetic; the same launch shape).
  auto norm_y = poisoned(device, DType::f32, c.rows, c.k), norm_h = poisoned(device, c.x, c.rows, c.k);
  NormTensors nt{.x = ux.view(), .y = norm_y.view()};
  if (c.weight) nt.weight = uw.view();
  if (c.residual) nt.residual = ur.view(), nt.residual_out = norm_h.view();
  Norm norm(nt, {.kind = NormKind::rms, .eps = 1e-6f});
  norm.execute(nt);
  const HostRows ny = download(norm_y.view());
  std::int64_t y_diff = 0;
  for (std::size_t i = 0; i < yv.values.size(); ++i)
    y_diff += std::memcmp(&yv.values[i], &ny.values[i], 4) != 0 && !(std::isnan(yv.values[i]) && std::isnan(ny.values[i]));
  EXPECT_EQ(y_diff, 0) << op.describe() << "\n" << norm.describe();
  // And y against fp64.
  for (std::int64_t i = 0; i < c.rows; ++i) {
    double square = 0;
    std::vector<double> hv;
    for (std::int64_t j = 0; j < c.k; ++j) {
      hv.push_back(c.residual ? rounded(c.x, static_cast<float>(double(x.at(i, j)) + r.at(i, j))) : x.at(i, j));
      square += hv.back() * hv.back();
    }
    const double rs = 1 / std::sqrt(square / static_cast<double>(c.k) + 1e-6);
    for (std::int64_t j = 0; j < c.k; ++j) {
      const double want = hv[static_cast<std::size_t>(j)] * rs * (c.weight ? w.at(0, j) : 1.0);
      if (std::isnan(want))
        ASSERT_TRUE(std::isnan(yv.at(i, j))) << i << "," << j;
      else
        ASSERT_NEAR(yv.at(i, j), want, 1e-5 * (std::fabs(want) + 1)) << i << "," << j;
    }
  }
}

void check_nvfp4_ties(const runtime::Device& device) {
  constexpr float kTies[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  const float inf = std::numeric_limits<float>::infinity();
  check_norm_quantize(
      device, {.format = kNvfp4, .x = DType::f32, .weight = false, .normalize = false, .rows = 8, .k = 256}, 40,
      nullptr, [&](HostRows& x) {
        const std::int64_t blocks = x.rows * x.n / 16;
        for (std::int64_t b = 0; b < blocks; ++b) {
          float* v = &x.values[static_cast<std::size_t>(b * 16)];
          // amax 6·d: amax / 6 is the e4m3 scale d exactly.
          const float d = decode(DType::e4m3, static_cast<std::uint8_t>(1 + b % 0x7e));
          v[0] = 6.0f * d;
          for (int i = 0; i < 7; ++i) v[1 + 2 * i] = kTies[i] * d, v[2 + 2 * i] = -kTies[i] * d;
          v[15] = b % 2 ? -0.0f : 0.0f;  // -0 keeps its sign (code 0x8)
          if (b == blocks - 1) v[0] = inf, v[1] = -inf;  // scale 448; ±inf saturate to ±6
        }
      });
}

void check_rows_past_the_plain_sum(const runtime::Device& device, const BlockScaledFormat& format) {
  check_norm_quantize(device, {.format = format, .rows = 3}, 32, nullptr, [&](HostRows& x) {
    for (std::int64_t j = 0; j < x.n; ++j) {
      x.values[static_cast<std::size_t>(x.n + j)] = rounded(DType::bf16, 3.0e38f * (j % 3 ? -0.7f : 0.9f));
      x.values[static_cast<std::size_t>(2 * x.n + j)] *= std::ldexp(1.0f, 40);
    }
  });
}

void check_tiny_blocks(const runtime::Device& device, const BlockScaledFormat& format) {
  check_norm_quantize(device, {.format = format, .x = DType::f32, .weight = false, .normalize = false, .rows = 3}, 33,
                      nullptr, [&](HostRows& x) {
                        for (std::size_t i = 0; i < x.values.size(); ++i)
                          x.values[i] *= std::ldexp(1.0f, -105 - static_cast<int>(i / 16 % 48));
                      });
}


void check_many_rows(const runtime::Device& device) {
  const std::int64_t many = 16 * device.properties().sm_count + 8, k = 2048;
  runtime::Buffer scratch(device, static_cast<std::size_t>(many * k * 2));
  auto shape_of = [&](std::int64_t rows, bool residual) {
    const TensorView x(device, scratch.address(), DType::bf16, {rows, k}),
        data(device, scratch.address(), DType::u8, {rows, k / 2}),
        scales(device, scratch.address(), DType::e4m3, {ScaleFactorLayout{rows, k, 1, 16}.bytes()});
    NormQuantizeTensors t{.x = x, .data = data, .scales = scales};
    if (residual) t.residual = x, t.residual_out = x;
    return RmsNormQuantize(t, {.format = kNvfp4}).describe();
  };
  EXPECT_NE(shape_of(many, false).find("8 vectors of 8 elements a thread"), std::string::npos) << shape_of(many, false);
  EXPECT_NE(shape_of(many, true).find("4 vectors of 8 elements a thread"), std::string::npos) << shape_of(many, true);
  EXPECT_NE(shape_of(4, false).find("4 vectors of 8 elements a thread"), std::string::npos) << shape_of(4, false);
  std::uint32_t seed = 50;
  check_norm_quantize(device, {.format = kNvfp4, .rows = many, .k = k}, seed++);
  check_norm_quantize(device, {.format = kMxfp8E4m3, .residual = true, .rows = many, .k = k}, seed++);
  // 128 -> 64 threads a row: the norm's allreduce meets 4 warps, this one 2.
  check_norm_quantize(device, {.format = kMxfp4, .rows = many, .k = 2 * k}, seed++);
  // Squares past f32's range: the fallback's scaled sums, two a thread too.
  check_norm_quantize(device, {.format = kNvfp4, .rows = many, .k = k}, seed++, nullptr, [&](HostRows& x) {
    for (std::int64_t i = 0; i < k; ++i) x.values[static_cast<std::size_t>(k + i)] = rounded(DType::bf16, 3.0e38f);
  });
}

}  // namespace warpforge::ops::testing
