#include "scaled_sum.hpp"

namespace warpforge::ops::rows {

using namespace dsl;

namespace {

constexpr std::uint32_t kExponentBias = 127;
constexpr std::uint32_t kFirstScaledExponent = kExponentBias + 32;  // magnitudes from 2^32 on are scaled
constexpr std::uint32_t kLargestScale = 126;                        // 2^-126: the smallest normal f32

// The f32 factor 2^d for d <= 0 (0 where 2^d is below the normals: such a
// part is negligible beside the other).
Reg factor(Kernel& k, const Reg& d) {
  Reg bits = k.reg(b32), chosen = k.reg(b32);
  k.shl(bits, d + static_cast<std::int32_t>(kExponentBias), 23u);
  k.selp(chosen, bits, 0, d >= -static_cast<std::int32_t>(kLargestScale));
  return chosen.as(f32);
}

}  // namespace

Reg power_of_two(Kernel& k, const Reg& q, bool negative) {
  Reg exponent = k.reg(s32);
  k.mad(exponent, q, negative ? -1 : 1, static_cast<std::int32_t>(kExponentBias));
  Reg bits = k.reg(b32);
  k.shl(bits, exponent, 23u);
  return bits.as(f32);
}

ScaledSum scaled_sum(const RowKernel& rk, const RowValue& value, int power) {
  Kernel& k = rk.kernel();
  // The largest magnitude as bits (an unsigned max orders non-negative
  // floats, NaN above infinity), then its biased exponent.
  Reg largest = k.mov(u32, 0u);
  rk.for_each_element([&](int j, int e) { k.max(largest, largest, value(j, e).as(b32) & 0x7fffffffu); });
  Reg exponent = largest >> 23u;
  Pred scaled = exponent >= kFirstScaledExponent && exponent < 255u;
  Reg q = k.reg(s32);
  k.selp(q, k.min(exponent - kExponentBias, kLargestScale).as(s32), 0, scaled);
  Reg down = power_of_two(k, q, true);
  Reg s = k.mov(f32, imm_f32(0.0f));
  rk.for_each_element([&](int j, int e) {
    Reg v = value(j, e);
    if (power == 1) {
      k.fma(s, v, down, s);
    } else {
      Reg t = k.reg(f32);
      k.mul(t, v, down, {Round::rn});
      k.fma(s, t, t, s);
    }
  });
  return {q, s};
}

tile::Combine combine_scaled_sums(int power, int count) {
  return [power, count](Kernel& k, const Regs& into, const Regs& other) {
    for (int i = 0; i < count; ++i) {
      const Reg &q1 = into[2 * i], &s1 = into[2 * i + 1], &q2 = other[2 * i], &s2 = other[2 * i + 1];
      Reg q = k.max(q1, q2);
      Reg f1 = factor(k, (q1 - q) * power), f2 = factor(k, (q2 - q) * power);
      Reg first = k.reg(f32);
      k.mul(first, s1, f1, {Round::rn});
      k.fma(s1, s2, f2, first);
      k.mov(q1, q);
    }
  };
}

Reg scaled_mean(Kernel& k, const ScaledSum& sum, int power, std::int64_t n) {
  Reg mean = k.div(sum.s, imm_f32(static_cast<float>(n)), {Round::rn});
  Reg up = power_of_two(k, sum.q, false);
  for (int i = 0; i < power; ++i) k.mul(mean, mean, up, {Round::rn});
  return mean;
}

}  // namespace warpforge::ops::rows
