#include "tensor_core_sum.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

namespace warpforge::sim {

namespace {

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

}  // namespace

bool exponents(const double* values, int count, int* out) {
  bool special = false;
  for (int k = 0; k < count; ++k) {
    out[k] = exponent_of(values[k]);
    special = special || out[k] == 1024;  // the all-ones exponent: infinity or NaN
  }
  return special;
}

double tensor_core_sum(double c, const Factors& a, const Factors& b, int count,
                       const TensorCoreSum& rule) {
  double acc = c;
  if (a.special || b.special || !std::isfinite(c)) {  // infinities and NaNs: the IEEE sum
    for (int k = 0; k < count; ++k) acc += a.value[k] * b.value[k];
    return acc;
  }
  for (int start = 0; start < count; start += rule.block) {
    const int end = start + rule.block < count ? start + rule.block : count;
    // The largest exponent among the block's nonzero products (each the sum
    // of its factors', before the product's normalization) and the accumulator.
    int top = acc != 0 ? exponent_of(acc) : INT_MIN;
    for (int k = start; k < end; ++k)
      if (a.value[k] != 0 && b.value[k] != 0) top = std::max(top, a.exponent[k] + b.exponent[k]);
    if (top == INT_MIN) continue;  // every term is zero: the accumulator stands
    const int q = top - rule.aligned_bits;
    double sum = cut(acc, q);
    for (int k = start; k < end; ++k) sum += cut(a.value[k] * b.value[k], q);
    if (sum != 0)
      sum = cut(sum, std::max(exponent_of(sum) - rule.result_bits,
                              -149));  // f32's subnormal step at least
    acc = sum;
  }
  return acc;
}

std::uint32_t accumulator_bits(double v) {
  if (std::isnan(v)) return 0x7FFFFFFFu;
  return __builtin_bit_cast(std::uint32_t, static_cast<float>(v));
}

}  // namespace warpforge::sim
