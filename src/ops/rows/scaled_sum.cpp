#include "scaled_sum.hpp"

#include <bit>
#include <optional>

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

namespace {

// The largest magnitude of the thread's values as bits (an unsigned max
// orders non-negative floats, NaN above infinity).
Reg largest_magnitude(const RowKernel& rk, const RowValue& value) {
  Kernel& k = rk.kernel();
  Reg largest = k.mov(u32, 0u);
  rk.for_each_element([&](int j, int e) { k.max(largest, largest, value(j, e).as(b32) & 0x7fffffffu); });
  return largest;
}

// q for values whose largest magnitude has the bits `largest` (s32).
Reg scale_of(Kernel& k, const Reg& largest) {
  Reg exponent = largest >> 23u;
  Pred scaled = exponent >= kFirstScaledExponent && exponent < 255u;
  Reg q = k.reg(s32);
  k.selp(q, k.min(exponent - kExponentBias, kLargestScale).as(s32), 0, scaled);
  return q;
}

// The thread's Σ (value · 2^-q)^power (f32), one for each of the
// `interleave` threads it stands for (vectors j with j % interleave = v: sum v).
Regs sums_scaled_by(const RowKernel& rk, const RowValue& value, int power, const Reg& q, int interleave) {
  Kernel& k = rk.kernel();
  Reg down = power_of_two(k, q, true);
  Regs s;
  for (int v = 0; v < interleave; ++v) s.push_back(k.mov(f32, imm_f32(0.0f)));
  rk.for_each_element([&](int j, int e) {
    Reg v = value(j, e);
    const Reg& sum = s[static_cast<std::size_t>(j % interleave)];
    if (power == 1) {
      k.fma(sum, v, down, sum);
    } else {
      Reg t = k.reg(f32);
      k.mul(t, v, down, {Round::rn});
      k.fma(sum, t, t, sum);
    }
  });
  return s;
}
Reg sum_scaled_by(const RowKernel& rk, const RowValue& value, int power, const Reg& q) {
  return sums_scaled_by(rk, value, power, q, 1)[0];
}

// The allreduced sums of the threads a thread stands for, added as the
// narrower shape's allreduce adds its warps' (the stand-ins' index is the
// high bits of that shape's warp index: pairs first, a butterfly's order).
Reg combined(Kernel& k, Regs sums) {
  for (std::size_t width = sums.size(); width > 1; width /= 2)
    for (std::size_t i = 0; i < width / 2; ++i) {
      Reg sum = k.reg(f32);
      k.add(sum, sums[2 * i], sums[2 * i + 1], {Round::rn});
      sums[i] = sum;
    }
  return sums[0];
}

}  // namespace

ScaledSum scaled_sum(const RowKernel& rk, const RowValue& value, int power) {
  Reg q = scale_of(rk.kernel(), largest_magnitude(rk, value));
  return {q, sum_scaled_by(rk, value, power, q)};
}

std::vector<ScaledSum> allreduced_sums(RowKernel& rk, const std::vector<RowValue>& values, int power, int interleave) {
  Kernel& k = rk.kernel();
  std::vector<ScaledSum> sums;
  std::vector<Regs> plain(values.size());  // each value's sums, one for each thread stood for
  Regs all;
  for (std::size_t i = 0; i < values.size(); ++i) {
    Reg q = k.mov(s32, 0);
    for (int v = 0; v < interleave; ++v) plain[i].push_back(k.mov(f32, imm_f32(0.0f))), all.push_back(plain[i].back());
    sums.push_back({q, interleave == 1 ? plain[i][0] : k.reg(f32)});
  }
  rk.for_each_element([&](int j, int e) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      Reg v = values[i](j, e);
      const Reg& sum = plain[i][static_cast<std::size_t>(j % interleave)];
      k.fma(sum, v, power == 1 ? Src(imm_f32(1.0f)) : Src(v), sum);
    }
  });
  rk.allreduce(all, tile::add());
  if (interleave > 1)
    for (std::size_t i = 0; i < values.size(); ++i) k.mov(sums[i].s, combined(k, plain[i]));
  // Not finite: the exponent field all ones (an integer compare of the magnitude's bits).
  std::optional<Pred> overflow;
  for (const ScaledSum& s : sums) {
    Pred p = (s.s.as(b32) & 0x7fffffffu) >= 0x7f800000u;
    overflow = overflow ? Pred(*overflow || p) : p;
  }
  // The group's largest magnitude gives the q that the scaled sums'
  // combination would reach; every thread then sums at that scale (no
  // value above 4, no overflow) and a plain add combines them.
  k.if_then(*overflow, [&] {
    Regs largest;
    for (const RowValue& v : values) largest.push_back(largest_magnitude(rk, v));
    rk.allreduce(largest, tile::max());
    std::vector<Regs> scaled;
    Regs all_scaled;
    for (std::size_t i = 0; i < values.size(); ++i) {
      k.mov(sums[i].q, scale_of(k, largest[i]));
      scaled.push_back(sums_scaled_by(rk, values[i], power, sums[i].q, interleave));
      all_scaled.insert(all_scaled.end(), scaled.back().begin(), scaled.back().end());
    }
    rk.allreduce(all_scaled, tile::add());
    for (std::size_t i = 0; i < values.size(); ++i) k.mov(sums[i].s, combined(k, scaled[i]));
  });
  return sums;
}

tile::Combine combine_scaled_sums(int power, int count) {
  // Both products rounded, then added: the same bits in either order (a
  // commutative combine: tile/reduction.hpp), where an fma of one product
  // would round only the other. A product is exact but where it falls below
  // the normals, a part 2^126 times below the other's scale.
  auto combine = [power, count](Kernel& k, const Regs& into, const Regs& other) {
    for (int i = 0; i < count; ++i) {
      const Reg &q1 = into[2 * i], &s1 = into[2 * i + 1], &q2 = other[2 * i], &s2 = other[2 * i + 1];
      Reg q = k.max(q1, q2);
      Reg first = k.reg(f32), second = k.reg(f32);
      k.mul(first, s1, factor(k, (q1 - q) * power), {Round::rn});
      k.mul(second, s2, factor(k, (q2 - q) * power), {Round::rn});
      k.add(s1, first, second, {Round::rn});
      k.mov(q1, q);
    }
  };
  return tile::Combine(combine, true);
}

Reg divided_by(Kernel& k, const Reg& v, std::int64_t n) {
  if (!std::has_single_bit(static_cast<std::uint64_t>(n)))
    return k.div(v, imm_f32(static_cast<float>(n)), {Round::rn});
  Reg quotient = k.reg(f32);
  k.mul(quotient, v, imm_f32(1.0f / static_cast<float>(n)), {Round::rn});
  return quotient;
}

Reg scaled_mean(Kernel& k, const ScaledSum& sum, int power, std::int64_t n, bool always_divide) {
  Reg mean = always_divide ? k.div(sum.s, imm_f32(static_cast<float>(n)), {Round::rn}) : divided_by(k, sum.s, n);
  Reg up = power_of_two(k, sum.q, false);
  for (int i = 0; i < power; ++i) k.mul(mean, mean, up, {Round::rn});
  return mean;
}

}  // namespace warpforge::ops::rows
