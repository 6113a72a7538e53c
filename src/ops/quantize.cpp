#include "warpforge/ops/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "warpforge/error.hpp"
#include "warpforge/ops/low_precision.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

// The exponent of the element format's largest normal (OCP MX v1.0 section 6.3, "emax_elem").
int largest_exponent(DType data) {
  switch (data) {
    case DType::e4m3:
      return 8;  // 448 = 1.75 · 2^8
    case DType::e5m2:
      return 15;  // 57344 = 1.75 · 2^15
    default:
      return 2;  // e2m1: 6 = 1.5 · 2^2
  }
}

void check(const BlockScaledFormat& f, std::int64_t k) {
  std::string why;
  if (f.data != DType::e4m3 && f.data != DType::e5m2 && f.data != DType::e2m1)
    why += " data dtype " + std::string(runtime::name(f.data)) + " (accepted e4m3, e5m2, e2m1);";
  if (f.scale != DType::e8m0 && f.scale != DType::e4m3)
    why += " scale dtype " + std::string(runtime::name(f.scale)) + " (accepted e8m0, e4m3);";
  if (f.vec != 16 && f.vec != 32) why += " vec " + std::to_string(f.vec) + " (accepted 16, 32);";
  if (f.data == DType::e2m1 && k % 2 != 0)
    why += " K " + std::to_string(k) + " with e2m1 data (two per byte: K must be even);";
  if (!why.empty()) throw OpsError("quantize refused:" + why.substr(0, why.size() - 1));
}

std::uint8_t block_scale(const BlockScaledFormat& f, float amax) {
  if (std::isnan(amax)) return f.scale == DType::e8m0 ? 0xFF : 0x7F;
  if (amax == 0.0f) return f.scale == DType::e8m0 ? 127 : 0x38;  // 1.0
  if (f.scale == DType::e4m3) {
    const std::uint8_t s = encode(DType::e4m3, amax / 6.0f);
    return s == 0 ? std::uint8_t{1}
                  : s;  // an amax too small for e4m3: its smallest subnormal, not 0
  }
  int e = 0;
  std::frexp(amax, &e);  // amax = f · 2^e, f in [0.5, 1): floor(log2 amax) = e - 1
  return static_cast<std::uint8_t>(std::clamp(e - 1 - largest_exponent(f.data), -127, 127) + 127);
}

}  // namespace

std::uint8_t QuantizedMatrix::code(std::int64_t r, std::int64_t kk, std::int64_t l) const {
  const std::int64_t i = (l * rows + r) * k + kk;
  if (format.data == DType::e2m1) return e2m1_at(data, i);
  return data[static_cast<std::size_t>(i)];
}

float QuantizedMatrix::scale(std::int64_t r, std::int64_t kk, std::int64_t l) const {
  return decode(format.scale,
                scales[static_cast<std::size_t>(scale_layout().offset(r, kk / format.vec, l))]);
}

float QuantizedMatrix::value(std::int64_t r, std::int64_t kk, std::int64_t l) const {
  return decode(format.data, code(r, kk, l)) * scale(r, kk, l);
}

QuantizedMatrix quantize(std::span<const float> x, std::int64_t rows, std::int64_t k,
                         std::int64_t batches, BlockScaledFormat format) {
  check(format, k);
  if (static_cast<std::int64_t>(x.size()) != rows * k * batches)
    throw OpsError("quantize refused: " + std::to_string(x.size()) + " values given for rows " +
                   std::to_string(rows) + " x K " + std::to_string(k) + " x batches " +
                   std::to_string(batches));
  QuantizedMatrix q{format, rows, k, batches, {}, {}};
  const ScaleFactorLayout layout = q.scale_layout();
  q.scales.assign(static_cast<std::size_t>(layout.bytes()), 0);
  std::vector<std::uint8_t> codes(x.size());
  for (std::int64_t l = 0; l < batches; ++l)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t kb = 0; kb < layout.k_blocks(); ++kb) {
        const std::int64_t first = (l * rows + r) * k + kb * format.vec;
        const std::int64_t count = std::min<std::int64_t>(format.vec, k - kb * format.vec);
        float amax = 0.0f;
        for (std::int64_t i = 0; i < count; ++i) {
          const float v = std::fabs(x[static_cast<std::size_t>(first + i)]);
          amax = std::isnan(v) || std::isnan(amax) ? v + amax : std::max(amax, v);
        }
        const std::uint8_t s = block_scale(format, amax);
        q.scales[static_cast<std::size_t>(layout.offset(r, kb, l))] = s;
        const float scale = decode(format.scale, s);
        for (std::int64_t i = 0; i < count; ++i) {
          const auto at = static_cast<std::size_t>(first + i);
          codes[at] = encode(format.data, x[at] / scale);
        }
      }
  q.data = format.data == DType::e2m1 ? pack_e2m1(codes) : std::move(codes);
  return q;
}

}  // namespace warpforge::ops
