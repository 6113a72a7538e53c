#include "float_format.hpp"

#include <cmath>

#include "warpforge/error.hpp"

namespace warpforge::sim {

// Canonical NaNs: PTX ISA 4.2.x "Floating point data types" — conversions
// produce the canonical NaN 0x7FFFFFFF (f32), 0x7FFF (f16, bf16); OCP FP8:
// e4m3 has only S.1111.111, e5m2's canonical NaN is 0x7F.
const FloatFormat kF32{8, 23, true, 0x7FFFFFFFu};
const FloatFormat kF16{5, 10, true, 0x7FFFu};
const FloatFormat kBF16{8, 7, true, 0x7FFFu};
const FloatFormat kTF32{8, 10, true, 0x7FFFFFFFu};  // held in 32 bits, low 13 zero (see encode)
const FloatFormat kE4M3{4, 3, false, 0x7Fu};
const FloatFormat kE5M2{5, 2, true, 0x7Fu};

const FloatFormat& float_format(ptx::Type t) {
  switch (t) {
    case ptx::Type::f32:
      return kF32;
    case ptx::Type::f16:
    case ptx::Type::f16x2:
      return kF16;
    case ptx::Type::bf16:
    case ptx::Type::bf16x2:
      return kBF16;
    case ptx::Type::tf32:
      return kTF32;
    case ptx::Type::e4m3:
    case ptx::Type::e4m3x2:
      return kE4M3;
    case ptx::Type::e5m2:
    case ptx::Type::e5m2x2:
      return kE5M2;
    default:
      throw SimError("no narrow float format for type ." + std::string(ptx::name(t)));
  }
}

namespace {

int bias(const FloatFormat& f) {
  return (1 << (f.exponent_bits - 1)) - 1;
}
int total_bits(const FloatFormat& f) {
  return 1 + f.exponent_bits + f.mantissa_bits;
}

// TF32 keeps f32's layout with only the top 10 mantissa bits significant.
int storage_shift(const FloatFormat& f) {
  return &f == &kTF32 ? 13 : 0;
}

double max_finite(const FloatFormat& f) {
  int emax = bias(f);
  double mant = 2.0 - std::ldexp(1.0, -f.mantissa_bits);
  if (!f.has_infinity) {
    // e4m3: the top exponent is finite except S.1111.111 (NaN): max 1.75·2^8 = 448.
    emax += 1;
    mant -= std::ldexp(1.0, -f.mantissa_bits);
  }
  return std::ldexp(mant, emax);
}

std::uint32_t max_finite_bits(const FloatFormat& f) {
  std::uint32_t exp_all = (1u << f.exponent_bits) - 1;
  std::uint32_t man_all = (1u << f.mantissa_bits) - 1;
  if (f.has_infinity) return ((exp_all - 1) << f.mantissa_bits) | man_all;
  return (exp_all << f.mantissa_bits) | (man_all - 1);
}

std::uint32_t infinity_bits(const FloatFormat& f) {
  return ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
}

}  // namespace

double decode_float(std::uint32_t bits, const FloatFormat& f) {
  bits >>= storage_shift(f);
  const int m = f.mantissa_bits;
  const std::uint32_t sign = (bits >> (f.exponent_bits + m)) & 1;
  const std::uint32_t exp = (bits >> m) & ((1u << f.exponent_bits) - 1);
  const std::uint32_t man = bits & ((1u << m) - 1);
  const std::uint32_t exp_all = (1u << f.exponent_bits) - 1;
  double v;
  if (f.has_infinity && exp == exp_all) {
    v = man ? NAN : INFINITY;
  } else if (!f.has_infinity && exp == exp_all && man == (1u << m) - 1) {
    v = NAN;
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), 1 - bias(f) - m);
  } else {
    v = std::ldexp(static_cast<double>(man | (1u << m)), static_cast<int>(exp) - bias(f) - m);
  }
  return sign ? -v : v;
}

std::uint32_t encode_float(long double x, const FloatFormat& f, Rounding mode, bool satfinite) {
  const int shift = storage_shift(f);
  const int m = f.mantissa_bits;
  const std::uint32_t sign_bit = 1u << (f.exponent_bits + m);
  if (std::isnan(x)) return f.nan_bits;
  const bool negative = std::signbit(x);
  const std::uint32_t sign = negative ? sign_bit : 0;
  const long double a = std::fabs(x);
  // Overflow result per mode (PTX ISA 4.7): rn → ∞; rz → max finite; rm/rp
  // toward ∞ only on their side. Formats without ∞ give NaN; .satfinite
  // always gives max finite.
  auto overflow = [&]() -> std::uint32_t {
    bool to_inf = mode == Rounding::none || mode == Rounding::rn || mode == Rounding::rna ||
                  (mode == Rounding::rp && !negative) || (mode == Rounding::rm && negative);
    if (satfinite || !to_inf) return (sign | max_finite_bits(f)) << shift;
    if (!f.has_infinity) return f.nan_bits;
    return (sign | infinity_bits(f)) << shift;
  };
  if (std::isinf(a)) {
    if (satfinite) return (sign | max_finite_bits(f)) << shift;
    return f.has_infinity ? (sign | infinity_bits(f)) << shift : f.nan_bits;
  }
  if (a == 0) return sign << shift;

  const int emin = 1 - bias(f);
  int e;
  std::frexp(a, &e);  // a = frac·2^e, frac in [0.5, 1)
  e -= 1;             // a = 1.xxx·2^e
  if (e < emin) e = emin;
  const long double scaled = std::ldexp(a, m - e);  // significand as a real number of quanta
  long double q = std::floor(scaled);
  const long double rest = scaled - q;
  bool up = false;
  switch (mode) {
    case Rounding::none:
    case Rounding::rn:
      up = rest > 0.5 || (rest == 0.5 && std::fmod(q, 2.0L) != 0);
      break;
    case Rounding::rna:
      up = rest >= 0.5;
      break;
    case Rounding::rz:
      up = false;
      break;
    case Rounding::rm:
      up = negative && rest > 0;
      break;
    case Rounding::rp:
      up = !negative && rest > 0;
      break;
  }
  if (up) q += 1;
  if (q >= std::ldexp(1.0L, m + 1)) {  // rounding carried into the next binade
    q /= 2;
    e += 1;
  }
  const long double value = std::ldexp(q, e - m);
  if (value > static_cast<long double>(max_finite(f))) return overflow();
  std::uint32_t man = static_cast<std::uint32_t>(q);
  std::uint32_t bits;
  if (man < (1u << m)) {
    bits = man;  // subnormal (e == emin)
  } else {
    bits = (static_cast<std::uint32_t>(e + bias(f)) << m) | (man - (1u << m));
  }
  return (sign | bits) << shift;
}

std::uint32_t flush_subnormal(std::uint32_t bits, const FloatFormat& f) {
  const int m = f.mantissa_bits;
  const std::uint32_t exp = (bits >> m) & ((1u << f.exponent_bits) - 1);
  if (exp == 0) return bits & (1u << (total_bits(f) - 1));
  return bits;
}

}  // namespace warpforge::sim
