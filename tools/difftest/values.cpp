#include "difftest/values.hpp"

#include <cmath>
#include <cstring>

namespace warpforge::difftest {

std::uint64_t FloatFormat::largest_finite() const {
  // e4m3 keeps its all-ones exponent for values, losing only S.1111.111 (NaN).
  if (!has_infinity) return exponent_mask() | (mantissa_mask() - 1);
  return (exponent_mask() - (1ull << mantissa_bits)) | mantissa_mask();
}

std::uint64_t float_edge(Rng& rng, const FloatFormat& f) {
  const std::uint64_t sign = rng.percent(50) ? f.sign_bit() : 0;
  const std::uint64_t m = f.mantissa_mask(), one_exp = static_cast<std::uint64_t>(f.bias())
                                                       << f.mantissa_bits;
  switch (rng.below(11)) {
    case 0:
      return sign;
    case 1:
      return sign | 1;  // smallest subnormal
    case 2:
      return sign | m;  // largest subnormal
    case 3:
      return sign | (1 + rng.below(m));  // a subnormal
    case 4:
      return sign | (m + 1);  // smallest normal
    case 5:
      return sign | one_exp;
    case 6:
      return sign | f.largest_finite();
    case 7:
      return sign | (f.largest_finite() - rng.below(4));
    case 8:
      if (f.has_infinity) return sign | f.exponent_mask();
      return sign | f.largest_finite();
    case 9:  // the canonical (quiet, empty payload) NaN
      return f.has_infinity ? (sign | f.exponent_mask() | (1ull << (f.mantissa_bits - 1)))
                            : (sign | f.exponent_mask() | m);
    default:  // a NaN with a random payload, quiet or signalling
      if (!f.has_infinity) return sign | f.exponent_mask() | m;
      return sign | f.exponent_mask() | (1 + rng.below(m));
  }
}

std::uint64_t float_moderate(Rng& rng, const FloatFormat& f, int spread) {
  const std::int64_t e =
      static_cast<std::int64_t>(rng.below(2 * static_cast<std::uint64_t>(spread) + 1)) - spread;
  const std::int64_t biased = f.bias() + e;
  const std::int64_t top = (1 << f.exponent_bits) - (f.has_infinity ? 2 : 1);
  const std::uint64_t exponent = static_cast<std::uint64_t>(biased < 1     ? 1
                                                            : biased > top ? top
                                                                           : biased);
  std::uint64_t v = (rng.percent(50) ? f.sign_bit() : 0) | exponent << f.mantissa_bits |
                    (rng.bits() & f.mantissa_mask());
  if (!f.has_infinity && (v & ~f.sign_bit()) == (f.exponent_mask() | f.mantissa_mask()))
    v -= 1;  // not e4m3's NaN
  return v;
}

std::uint64_t float_value(Rng& rng, const FloatFormat& f) {
  const std::uint64_t r = rng.below(100);
  if (r < 25) return float_edge(rng, f);
  if (r < 45) return rng.bits() & (f.width() == 64 ? ~0ull : (1ull << f.width()) - 1);
  return float_moderate(rng, f, 6);
}

std::uint64_t float_tie(Rng& rng, const FloatFormat& f, int kept) {
  const int dropped = f.mantissa_bits - kept;
  std::uint64_t v = float_moderate(rng, f, rng.percent(20) ? (1 << (f.exponent_bits - 1)) - 2 : 6);
  if (dropped <= 0) return v;
  const std::uint64_t low = (1ull << dropped) - 1, half = 1ull << (dropped - 1);
  v &= ~low;
  switch (rng.below(3)) {
    case 0:
      return v | half;
    case 1:
      return v | (half - 1);
    default:
      return v | (half + 1);
  }
}

std::uint64_t int_value(Rng& rng, int width) {
  const std::uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
  const std::uint64_t smax = mask >> 1;
  const std::uint64_t r = rng.below(100);
  if (r < 30) {
    switch (rng.below(9)) {
      case 0:
        return 0;
      case 1:
        return 1;
      case 2:
        return mask;  // -1
      case 3:
        return smax;  // the signed maximum
      case 4:
        return smax + 1;  // the signed minimum
      case 5:
        return (smax - 1) & mask;
      case 6:
        return (smax + 2) & mask;
      case 7:
        return (1ull << rng.below(static_cast<std::uint64_t>(width))) & mask;
      default:
        return (mask - rng.below(3)) & mask;
    }
  }
  if (r < 55) {  // small magnitudes, either sign
    const std::uint64_t v = rng.below(64);
    return (rng.percent(50) ? v : (0 - v)) & mask;
  }
  return rng.bits() & mask;
}

std::uint64_t float_bits_toward_zero(double v, const FloatFormat& f) {
  if (&f == &kF64) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  }
  // Through f32 by truncation, then the format's mantissa cut.
  const float x = static_cast<float>(v);
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  if (f.exponent_bits == 8)
    return b >> (23 - f.mantissa_bits);  // f32, bf16 (tf32 would keep 32 bits)
  // Narrower exponent: rebuild from the value's exponent and mantissa.
  const std::uint64_t sign = std::signbit(v) ? f.sign_bit() : 0;
  if (v == 0 || std::isnan(v)) return sign;
  int e;
  const double fr = std::frexp(std::fabs(v), &e);  // v = fr · 2^e, fr in [0.5, 1)
  std::int64_t biased = e - 1 + f.bias();
  if (biased >= (1 << f.exponent_bits) - (f.has_infinity ? 1 : 0)) return sign | f.largest_finite();
  if (biased < 1) {
    const double scaled = std::ldexp(std::fabs(v), f.bias() - 1 + f.mantissa_bits);
    return sign | static_cast<std::uint64_t>(scaled);
  }
  const auto mant = static_cast<std::uint64_t>(std::ldexp(fr * 2 - 1, f.mantissa_bits));
  std::uint64_t out = sign | static_cast<std::uint64_t>(biased) << f.mantissa_bits | mant;
  if (!f.has_infinity && (out & ~f.sign_bit()) > f.largest_finite())
    out = sign | f.largest_finite();
  return out;
}

}  // namespace warpforge::difftest
