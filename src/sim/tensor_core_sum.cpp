#include "tensor_core_sum.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "float_format.hpp"

namespace warpforge::sim {

namespace {

// A zero's exponent: far below any finite product's (at least 2·(−1074)),
// so that a product with a zero factor never sets the alignment.
constexpr int kZeroExponent = -(1 << 20);
// The largest exponent of a block that holds no nonzero term.
constexpr int kNoTerm = kZeroExponent / 2;

// Every value here is a normal double or zero (f32, f16, bf16 and FP8 values
// and their products are), so exponents and cuts are read off the bits: the
// simulator runs this for every element of every matrix instruction.
int exponent_of(double x) {
  return static_cast<int>((__builtin_bit_cast(std::uint64_t, x) >> 52) & 0x7FF) - 1023;
}

// x cut toward zero to a multiple of 2^q: the significand bits below 2^q
// cleared (all of them, leaving a zero of x's sign, when x < 2^q).
inline double cut(double x, int q) {
  const std::uint64_t bits = __builtin_bit_cast(std::uint64_t, x);
  const int drop = q - (static_cast<int>((bits >> 52) & 0x7FF) - 1075);
  if (drop <= 0) return x;  // also zero, whose exponent field reads as -1075 + 0
  const std::uint64_t kept =
      drop > 52 ? bits & (std::uint64_t{1} << 63) : bits & ~((std::uint64_t{1} << drop) - 1);
  return __builtin_bit_cast(double, kept);
}

// 2^e for a normal double's exponent range.
inline double power_of_two(int e) {
  return __builtin_bit_cast(double, static_cast<std::uint64_t>(e + 1023) << 52);
}

}  // namespace

bool exponents(const double* values, int count, int min_exponent, int* out) {
  bool special = false;
  for (int k = 0; k < count; ++k) {
    out[k] = values[k] != 0 ? std::max(exponent_of(values[k]), min_exponent) : kZeroExponent;
    special = special || out[k] == 1024;  // the all-ones exponent: infinity or NaN
  }
  return special;
}

int element_min_exponent(ptx::Type t) {
  return 2 - (1 << (float_format(t).exponent_bits - 1));
}

namespace {

// One step of the rule: acc and the n products a[k]·b[k]. N is an int, or a
// std::integral_constant for the usual block sizes, whose fixed trip count
// lets the compiler vectorize the loops without scalar prologues.
template <class N>
double step(double acc, const double* a, const int* a_exp, const double* b, const int* b_exp, N n,
            const TensorCoreSum& rule) {
  // The largest exponent among the nonzero products (each the sum of its
  // factors', before the product's normalization) and the accumulator; a
  // zero's exponent is too small to count.
  int top = acc != 0 ? exponent_of(acc) : kZeroExponent;
  for (int k = 0; k < n; ++k) top = std::max(top, a_exp[k] + b_exp[k]);
  if (top < kNoTerm) return acc;  // every term is zero: the accumulator stands
  // Each term in units of 2^q, cut toward zero by the conversion to an
  // integer (which truncates): scaling by a power of two is exact, and a term
  // is below 2^(aligned_bits + 2) units, so an int32 holds it.
  const int q = top - rule.aligned_bits;
  const double scale = power_of_two(-q);
  std::int64_t sum = static_cast<std::int32_t>(acc * scale);
  for (int k = 0; k < n; ++k) sum += static_cast<std::int32_t>(a[k] * b[k] * scale);
  if (sum == 0) return 0.0;  // an exact cancellation: +0, as IEEE addition gives
  // The exact sum (|sum| < 2^53), cut toward zero to result_bits below its
  // leading bit, f32's subnormal step at least.
  const double exact = static_cast<double>(sum) * power_of_two(q);
  return cut(exact, std::max(exponent_of(exact) - rule.result_bits, -149));
}

}  // namespace

double tensor_core_sum(double c, const Factors& a, const Factors& b, int count,
                       const TensorCoreSum& rule) {
  double acc = c;
  if (a.special || b.special || !std::isfinite(c)) {  // infinities and NaNs: the IEEE sum
    for (int k = 0; k < count; ++k) acc += a.value[k] * b.value[k];
    return acc;
  }
  static_assert(kHopperHalfSum.aligned_bits + 2 < 31 && kHopperFp8Sum.aligned_bits + 2 < 31,
                "a cut term must fit an int32");
  for (int start = 0; start < count; start += rule.block) {
    const int n = std::min(rule.block, count - start);
    const double* av = a.value + start;
    const double* bv = b.value + start;
    const int* ae = a.exponent + start;
    const int* be = b.exponent + start;
    switch (n) {
      case 8:
        acc = step(acc, av, ae, bv, be, std::integral_constant<int, 8>{}, rule);
        break;
      case 16:
        acc = step(acc, av, ae, bv, be, std::integral_constant<int, 16>{}, rule);
        break;
      case 32:
        acc = step(acc, av, ae, bv, be, std::integral_constant<int, 32>{}, rule);
        break;
      default:
        acc = step(acc, av, ae, bv, be, n, rule);
    }
  }
  return acc;
}

std::uint32_t accumulator_bits(double v) {
  if (std::isnan(v)) return 0x7FFFFFFFu;
  return __builtin_bit_cast(std::uint32_t, static_cast<float>(v));
}

}  // namespace warpforge::sim
