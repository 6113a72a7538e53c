#include "warpforge/ops/low_precision.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "warpforge/error.hpp"
#include "warpforge/ops/half.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

// A sign-magnitude minifloat (OCP MX v1.0 table 1).
struct Minifloat {
  int exponent_bits, mantissa_bits, bias;
  bool has_infinity;  // e5m2: IEEE inf and NaN at the top exponent
  bool has_nan;       // e4m3: only S.1111.111; e2m1: none
  std::uint8_t max_code;
};

constexpr Minifloat kE4M3{4, 3, 7, false, true, 0x7E};
constexpr Minifloat kE5M2{5, 2, 15, true, true, 0x7B};
constexpr Minifloat kE2M1{2, 1, 1, false, false, 0x7};

[[noreturn]] void refuse(const char* what, DType t) {
  throw OpsError(std::string(what) + " of dtype " + std::string(runtime::name(t)) +
                 " refused: accepted e4m3, e5m2, e2m1 and e8m0");
}

const Minifloat& minifloat(DType t, const char* what) {
  switch (t) {
    case DType::e4m3:
      return kE4M3;
    case DType::e5m2:
      return kE5M2;
    case DType::e2m1:
      return kE2M1;
    default:
      refuse(what, t);
  }
}

float decode_minifloat(const Minifloat& f, std::uint8_t code) {
  const int m = f.mantissa_bits;
  const int top = (1 << f.exponent_bits) - 1;
  const bool negative = (code >> (f.exponent_bits + m)) & 1;
  const int exponent = (code >> m) & top;
  const int mantissa = code & ((1 << m) - 1);
  float v;
  if (f.has_infinity && exponent == top)
    v = mantissa == 0 ? std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::quiet_NaN();
  else if (!f.has_infinity && f.has_nan && exponent == top && mantissa == (1 << m) - 1)
    v = std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0)
    v = std::ldexp(static_cast<float>(mantissa), 1 - f.bias - m);  // subnormal: 0.m · 2^(1-bias)
  else
    v = std::ldexp(static_cast<float>((1 << m) | mantissa), exponent - f.bias - m);
  return negative ? -v : v;
}

std::uint8_t encode_minifloat(const Minifloat& f, float x) {
  const int m = f.mantissa_bits;
  const std::uint8_t sign =
      static_cast<std::uint8_t>(std::signbit(x) ? 1u << (f.exponent_bits + m) : 0u);
  if (std::isnan(x))
    return f.has_nan ? 0x7F : f.max_code;  // e2m1 has no NaN: +max (see the header)
  const double a = std::fabs(static_cast<double>(x));
  if (a >= decode_minifloat(f, f.max_code)) return sign | f.max_code;  // satfinite
  // Below the smallest normal 2^(1-bias) the code is the multiple of the
  // subnormal step; a count of 2^m is the smallest normal's code, as wanted.
  if (a < std::ldexp(1.0, 1 - f.bias)) {
    auto steps = static_cast<int>(std::nearbyint(std::ldexp(a, f.bias + m - 1)));  // RNE
    return sign | static_cast<std::uint8_t>(steps);
  }
  int e = 0;
  const double fraction = std::frexp(a, &e);  // a = fraction · 2^e, fraction in [0.5, 1)
  auto mantissa = static_cast<int>(std::nearbyint(std::ldexp(fraction, m + 1)) - (1 << m));  // RNE
  int exponent = e - 1 + f.bias;
  if (mantissa == (1 << m)) {  // rounded up into the next binade
    mantissa = 0;
    ++exponent;
  }
  return sign | static_cast<std::uint8_t>((exponent << m) | mantissa);
}

}  // namespace

bool is_low_precision(DType t) {
  return t == DType::e4m3 || t == DType::e5m2 || t == DType::e2m1 || t == DType::e8m0;
}

float decode(DType t, std::uint8_t code) {
  if (t == DType::e8m0)
    return code == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, code - 127);
  const Minifloat& f = minifloat(t, "decode");
  if (t == DType::e2m1 && code > 0xF)
    throw OpsError("decode of e2m1 code " + std::to_string(code) +
                   " refused: e2m1 codes are nibbles 0..15");
  return decode_minifloat(f, code);
}

std::uint8_t encode(DType t, float x) {
  if (t == DType::e8m0) {
    const double a = std::fabs(static_cast<double>(x));
    if (std::isnan(x) || a > std::ldexp(1.0, 127)) return 0xFF;
    if (a <= std::ldexp(1.0, -127)) return 0;
    int e = 0;
    const double fraction = std::frexp(a, &e);         // a = fraction · 2^e
    const int exponent = fraction == 0.5 ? e - 1 : e;  // round up to a power of two
    return static_cast<std::uint8_t>(exponent + 127);
  }
  return encode_minifloat(minifloat(t, "encode"), x);
}

float max_finite(DType t) {
  if (t == DType::e8m0) return std::ldexp(1.0f, 127);
  const Minifloat& f = minifloat(t, "max_finite");
  return decode_minifloat(f, f.max_code);
}

float round_to(DType t, float x) {
  switch (t) {
    case DType::f32:
      return x;
    case DType::f16:
      return round_to_f16(x);
    case DType::bf16:
      return round_to_bf16(x);
    case DType::e4m3:
    case DType::e5m2:
    case DType::e2m1:
      return decode(t, encode(t, x));
    default:
      throw OpsError("round_to dtype " + std::string(runtime::name(t)) +
                     " refused: accepted f32, f16, bf16, e4m3, e5m2, e2m1");
  }
}

std::vector<std::uint8_t> pack_e2m1(std::span<const std::uint8_t> codes) {
  std::vector<std::uint8_t> bytes((codes.size() + 1) / 2, 0);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] > 0xF)
      throw OpsError("pack_e2m1: code " + std::to_string(codes[i]) + " at index " +
                     std::to_string(i) + " refused: e2m1 codes are nibbles 0..15");
    bytes[i / 2] |= static_cast<std::uint8_t>(codes[i] << (4 * (i % 2)));
  }
  return bytes;
}

}  // namespace warpforge::ops
