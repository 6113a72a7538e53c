#include "tensor_core_sum.hpp"

#include <climits>
#include <cmath>

namespace warpforge::sim {

namespace {

// x cut toward zero to a multiple of 2^q (exact in double).
double cut(double x, int q) { return std::ldexp(std::trunc(std::ldexp(x, -q)), q); }

}  // namespace

double tensor_core_sum(double c, const double* a, const double* b, int count, const TensorCoreSum& rule) {
  double acc = c;
  bool special = !std::isfinite(c);
  for (int k = 0; k < count; ++k) special = special || !std::isfinite(a[k]) || !std::isfinite(b[k]);
  if (special) {  // infinities and NaNs: the IEEE sum
    for (int k = 0; k < count; ++k) acc += a[k] * b[k];
    return acc;
  }
  double products[64];
  for (int start = 0; start < count; start += rule.block) {
    const int end = start + rule.block < count ? start + rule.block : count;
    int top = acc != 0 ? std::ilogb(acc) : INT_MIN;
    for (int k = start; k < end; ++k) {
      products[k - start] = a[k] * b[k];
      if (products[k - start] == 0) continue;
      const int e = std::ilogb(a[k]) + std::ilogb(b[k]);  // the exponent before the product's normalization
      if (e > top) top = e;
    }
    if (top == INT_MIN) continue;  // every term is zero: the accumulator stands
    const int q = top - rule.aligned_bits;
    double sum = cut(acc, q);
    for (int k = start; k < end; ++k) sum += cut(products[k - start], q);
    if (sum != 0) {
      int r = std::ilogb(sum) - rule.result_bits;
      if (r < -149) r = -149;  // f32's subnormal step
      sum = cut(sum, r);
    }
    acc = sum;
  }
  return acc;
}

std::uint32_t accumulator_bits(double v) {
  if (std::isnan(v)) return 0x7FFFFFFFu;
  return __builtin_bit_cast(std::uint32_t, static_cast<float>(v));
}

}  // namespace warpforge::sim
