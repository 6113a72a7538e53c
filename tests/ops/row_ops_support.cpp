#include "row_ops_support.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "warpforge/ops/half.hpp"

namespace warpforge::ops::testing {

using runtime::DType;

namespace {

int bytes_of(DType t) {
  return runtime::bits(t) / 8;
}

void encode(DType t, float v, std::uint8_t* out) {
  if (t == DType::f32) {
    std::memcpy(out, &v, 4);
    return;
  }
  const std::uint16_t h = t == DType::bf16 ? f32_to_bf16_bits(v) : f32_to_f16_bits(v);
  std::memcpy(out, &h, 2);
}

float decode(DType t, const std::uint8_t* in) {
  if (t == DType::f32) {
    float v;
    std::memcpy(&v, in, 4);
    return v;
  }
  std::uint16_t h;
  std::memcpy(&h, in, 2);
  return t == DType::bf16 ? bf16_bits_to_f32(h) : f16_bits_to_f32(h);
}

DeviceRows make(const runtime::Device& device, DType dtype, std::vector<std::int64_t> shape,
                std::vector<std::int64_t> strides, const std::vector<std::uint8_t>& bytes) {
  auto buffer = std::make_shared<runtime::Buffer>(device, std::max<std::size_t>(bytes.size(), 16));
  if (!bytes.empty()) buffer->copy_from_host(bytes.data(), bytes.size());
  runtime::TensorView view(*buffer, dtype, std::move(shape), std::move(strides));
  return {buffer, runtime::Tensor(view, buffer)};
}

std::string number(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.9g", v);
  return s;
}

}  // namespace

float rounded(DType dtype, float value) {
  if (dtype == DType::bf16) return round_to_bf16(value);
  if (dtype == DType::f16) return round_to_f16(value);
  return value;
}

double unit_roundoff(DType dtype) {
  return dtype == DType::bf16 ? std::ldexp(1.0, -8) : dtype == DType::f16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
}

HostRows random_rows(std::mt19937& rng, DType dtype, std::int64_t rows, std::int64_t n, float sigma, float mean) {
  std::normal_distribution<float> normal(mean, sigma);
  HostRows h{dtype, rows, n, {}};
  h.values.resize(static_cast<std::size_t>(rows * n));
  for (float& v : h.values) v = rounded(dtype, normal(rng));
  return h;
}

DeviceRows upload(const runtime::Device& device, const HostRows& rows, std::int64_t stride) {
  if (stride == 0) stride = rows.n;
  const int b = bytes_of(rows.dtype);
  const std::int64_t extent = rows.rows == 0 ? 0 : (rows.rows - 1) * stride + rows.n;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(extent * b), 0xFF);  // the gaps: NaN bits
  for (std::int64_t r = 0; r < rows.rows; ++r)
    for (std::int64_t c = 0; c < rows.n; ++c)
      encode(rows.dtype, rows.at(r, c), &bytes[static_cast<std::size_t>((r * stride + c) * b)]);
  return make(device, rows.dtype, {rows.rows, rows.n}, {stride, 1}, bytes);
}

DeviceRows upload_vector(const runtime::Device& device, const HostRows& one_row) {
  const int b = bytes_of(one_row.dtype);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(one_row.n * b));
  for (std::int64_t c = 0; c < one_row.n; ++c) encode(one_row.dtype, one_row.at(0, c), &bytes[static_cast<std::size_t>(c * b)]);
  return make(device, one_row.dtype, {one_row.n}, {1}, bytes);
}

DeviceRows poisoned(const runtime::Device& device, DType dtype, std::int64_t rows, std::int64_t n,
                    std::int64_t stride) {
  if (stride == 0) stride = n;
  const std::int64_t extent = rows == 0 ? 0 : (rows - 1) * stride + n;
  return make(device, dtype, {rows, n}, {stride, 1},
              std::vector<std::uint8_t>(static_cast<std::size_t>(extent * bytes_of(dtype)), 0xFF));
}

DeviceRows poisoned_vector(const runtime::Device& device, DType dtype, std::int64_t n) {
  return make(device, dtype, {n}, {1}, std::vector<std::uint8_t>(static_cast<std::size_t>(n * bytes_of(dtype)), 0xFF));
}

HostRows download(const runtime::TensorView& view) {
  const int b = bytes_of(view.dtype());
  const std::int64_t rows = view.rank() == 2 ? view.shape()[0] : 1;
  const std::int64_t n = view.shape().back();
  const std::int64_t stride = view.rank() == 2 ? view.strides()[0] : n;
  std::vector<std::uint8_t> bytes(view.extent_bytes());
  if (!bytes.empty()) view.device().backend().copy_to_host(bytes.data(), view.address(), bytes.size(), nullptr);
  HostRows h{view.dtype(), rows, n, {}};
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < n; ++c)
      h.values.push_back(decode(view.dtype(), &bytes[static_cast<std::size_t>((r * stride + c) * b)]));
  return h;
}

Mismatches compare(const HostRows& got, const std::vector<double>& want,
                   const std::function<double(std::int64_t r, std::int64_t c)>& bound) {
  // Half the spacing of the output dtype's subnormals: a value's rounding
  // there is absolute, not relative to it.
  const double floor = got.dtype == DType::f16 ? std::ldexp(1.0, -25)
                       : got.dtype == DType::bf16 ? std::ldexp(1.0, -134)
                                                  : std::ldexp(1.0, -150);
  Mismatches m;
  for (std::int64_t r = 0; r < got.rows; ++r)
    for (std::int64_t c = 0; c < got.n; ++c) {
      const double g = got.at(r, c), w = want[static_cast<std::size_t>(r * got.n + c)];
      bool ok;
      if (std::isnan(w) || std::isnan(g))
        ok = std::isnan(w) && std::isnan(g);
      else if (std::isinf(w) || std::isinf(g))
        ok = g == w;
      else
        ok = std::fabs(g - w) <= bound(r, c) + floor;
      if (ok) continue;
      if (++m.count <= 5)
        m.first += " (" + std::to_string(r) + ", " + std::to_string(c) + "): got " + number(g) + " want " + number(w) +
                   " bound " + number(bound(r, c)) + ";";
    }
  return m;
}

}  // namespace warpforge::ops::testing
