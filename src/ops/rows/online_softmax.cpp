#include "online_softmax.hpp"

#include <limits>

namespace warpforge::ops::rows {

using namespace dsl;

namespace {

constexpr float kLog2e = 1.44269504088896340736f;

}  // namespace

Reg safe_max(Kernel& k, const Reg& max) {
  return k.selp(imm_f32(0.0f), max, k.setp(Cmp::eq, max, imm_f32(-std::numeric_limits<float>::infinity())));
}

// ex2.approx.ftz (PTX ISA 9.7.3.22): one MUFU.EX2 where the subnormal-
// preserving form takes a compare and two multiplies around it (ptxas
// sm_90a): exponentials below 2^-126 (v - shift < -87.3) are 0, beside a
// row's sum of at least 1 (its max's exponential).
Reg exp_shifted(Kernel& k, const Reg& v, const Reg& shift) {
  Reg t = k.reg(f32);
  k.sub(t, v, shift, {Round::rn});
  k.mul(t, t, imm_f32(kLog2e), {Round::rn});
  Reg e = k.reg(f32);
  k.ex2_approx(e, t, true);
  return e;
}

OnlineSoftmax online_softmax(const RowKernel& rk, const RowValue& value) {
  Kernel& k = rk.kernel();
  Reg m = k.mov(f32, imm_f32(-std::numeric_limits<float>::infinity()));
  rk.for_each_element([&](int j, int e) { k.max(m, m, value(j, e)); });
  Reg shift = safe_max(k, m);
  Reg s = k.mov(f32, imm_f32(0.0f));
  rk.for_each_element([&](int j, int e) { k.add(s, s, exp_shifted(k, value(j, e), shift), {Round::rn}); });
  return {m, s};
}

tile::Combine combine_online_softmax() {
  // Both products rounded, then added (not an fma of one): the same bits in
  // either order, a commutative combine (tile/reduction.hpp).
  auto combine = [](Kernel& k, const Regs& into, const Regs& other) {
    const Reg &m1 = into[0], &s1 = into[1], &m2 = other[0], &s2 = other[1];
    Reg m = k.max(m1, m2);
    // exp(m_i - M), 1 where m_i is M (also both infinite, where the difference is NaN).
    auto factor = [&](const Reg& mi) {
      Reg f = exp_shifted(k, mi, m);
      return k.selp(imm_f32(1.0f), f, k.setp(Cmp::eq, mi, m));
    };
    Reg f1 = factor(m1), f2 = factor(m2);
    Reg first = k.reg(f32), second = k.reg(f32);
    k.mul(first, s1, f1, {Round::rn});
    k.mul(second, s2, f2, {Round::rn});
    k.add(s1, first, second, {Round::rn});
    k.mov(m1, m);
  };
  return tile::Combine(combine, true);
}

}  // namespace warpforge::ops::rows
