// Binary floating-point formats narrower than (or as wide as) f32, and exact
// conversion of a double to them under every PTX rounding mode. One routine
// serves cvt to f32, f16, bf16, tf32, e4m3 and e5m2, so the rounding rules
// (PTX ISA 9.7.9.21 "cvt", 4.7 "Floating-point rounding") live in one place.
#pragma once

#include <cstdint>

#include "program.hpp"
#include "warpforge/ptx/types.hpp"

namespace warpforge::sim {

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  bool has_infinity;       // e4m3 (OCP "fn") has none: S.1111.111 is its only NaN
  std::uint32_t nan_bits;  // the canonical NaN PTX produces
};

extern const FloatFormat kF32, kF16, kBF16, kTF32, kE4M3, kE5M2;

// The format of a scalar float type (f32, f16, bf16, tf32, e4m3, e5m2).
const FloatFormat& float_format(ptx::Type t);

double decode_float(std::uint32_t bits, const FloatFormat& f);

// Rounds x (a long double, so that callers can pass a value strictly between
// two doubles, see float_ops.cpp) to the format with the given mode (none means rn). `satfinite`
// clamps overflow and infinities to the largest finite value (NaN stays NaN);
// without it, overflow goes to infinity or the largest finite value as the
// mode directs, or to NaN in a format without infinity.
std::uint32_t encode_float(long double x, const FloatFormat& f, Rounding mode, bool satfinite);

// Flushes a subnormal of the format to a zero of the same sign (.ftz).
std::uint32_t flush_subnormal(std::uint32_t bits, const FloatFormat& f);

inline float f32_of(std::uint64_t bits) {
  return __builtin_bit_cast(float, static_cast<std::uint32_t>(bits));
}
inline double f64_of(std::uint64_t bits) {
  return __builtin_bit_cast(double, bits);
}
inline std::uint64_t bits_of(float v) {
  return __builtin_bit_cast(std::uint32_t, v);
}
inline std::uint64_t bits_of(double v) {
  return __builtin_bit_cast(std::uint64_t, v);
}

}  // namespace warpforge::sim
