// The forward normalization's row arithmetic (norm_row.hpp).
#include "norm_row.hpp"

namespace warpforge::ops {

using namespace dsl;
using rows::RowFragment;
using rows::RowOperand;
using rows::ScaledSum;

RowFragment NormRow::input(const Reg& x, const Reg& residual, const Reg& residual_out, const Reg& row) {
  return input(load(x, residual, row), residual_out, row);
}

std::vector<RowFragment> NormRow::load(const Reg& x, const Reg& residual, const Reg& row) {
  std::vector<RowFragment> loaded{rk_.load({p_.x.dtype, x, p_.x.row_stride}, &row, 0.0f)};
  if (p_.residual) loaded.push_back(rk_.load({p_.residual->dtype, residual, p_.residual->row_stride}, &row, 0.0f));
  return loaded;
}

RowFragment NormRow::input(const std::vector<RowFragment>& loaded, const Reg& residual_out, const Reg& row) {
  const RowFragment& h = loaded[0];
  if (!p_.residual) return h;
  const RowFragment& r = loaded[1];
  const RowOperand h_out{p_.residual_out->dtype, residual_out, p_.residual_out->row_stride};
  RowFragment sum_h = rk_.pack(h_out.dtype, [&](int j, int e) { return sum(h.value(j, e), r.value(j, e)); });
  rk_.store(h_out, &row, sum_h);
  return sum_h;
}

NormRow::Statistics NormRow::statistics(const RowFragment& h, const Reg& x, const Reg& residual, const Reg& row) {
  return p_.options.kind == NormKind::rms ? rms(h) : layer(h, x, residual, row);
}

Reg NormRow::sum(const Reg& a, const Reg& b) {
  Reg s = k_.reg(f32);
  k_.add(s, a, b, {Round::rn});
  return s;
}

// 1/sqrt(s/n + eps') where the sum was not scaled, else 1/sqrt(s/n) (the
// values reach 2^32, so the mean square is at least 2^64/n: eps' is lost
// beside it); rsqrt.approx (PTX ISA 9.7.3.18, as PyTorch's rsqrtf).
Reg NormRow::inverse_root(const ScaledSum& s, float eps) {
  // div.rn, not divided_by's multiply: see scaled_mean's always_divide.
  Reg mean_square = k_.div(s.s, imm_f32(static_cast<float>(p_.n)), {Round::rn});
  Reg with_eps = k_.reg(f32);
  k_.add(with_eps, mean_square, imm_f32(eps), {Round::rn});
  Reg r = k_.reg(f32);
  k_.rsqrt_approx(r, k_.selp(with_eps, mean_square, s.q == 0));
  return r;
}

NormRow::Statistics NormRow::rms(const RowFragment& h) {
  // The norm kernel: the scaled sum's combination in one allreduce, not
  // allreduced_sums' plain sum and its fallback: RMSNorm holds 4 vectors a
  // thread (its registers full: the fallback's second path spills), over
  // which the combination's cost is spread. The norm + quantize kernel: the
  // plain sum first (SquareSum).
  const rows::RowValue value = [&](int j, int e) { return h.value(j, e); };
  ScaledSum s;
  if (square_sum_ == SquareSum::plain_first) {
    s = rows::allreduced_sums(rk_, {value}, 2, interleave_)[0];
  } else {
    s = rows::scaled_sum(rk_, value, 2);
    rk_.allreduce(s.regs(), rows::combine_scaled_sums(2));
  }
  Statistics st;
  st.r = inverse_root(s, p_.options.eps);
  st.down = rows::power_of_two(k_, s.q, true);
  st.rstd = k_.reg(f32);
  k_.mul(st.rstd, st.down, st.r, {Round::rn});
  st.scale = st.rstd;
  return st;
}

NormRow::Statistics NormRow::layer(const RowFragment& h, const Reg& x, const Reg& residual, const Reg& row) {
  Statistics st;
  st.halved = true;
  // The row's first element (h's, as rounded), read by every thread.
  Reg half_pivot = k_.reg(f32);
  k_.mul(half_pivot, first_element(x, residual, row), imm_f32(0.5f), {Round::rn});
  auto centred = [&](const Reg& minus_shift) {
    return [&, minus_shift](int j, int e) {
      Reg c = k_.reg(f32);
      k_.fma(c, h.value(j, e), imm_f32(0.5f), minus_shift);
      return rk_.in_row_or(j, c, imm_f32(0.0f));
    };
  };
  const ScaledSum d = rows::allreduced_sums(rk_, {centred(neg(half_pivot))}, 1)[0];
  Reg half_mean = sum(half_pivot, rows::scaled_mean(k_, d, 1, p_.n, true));
  st.minus_shift = neg(half_mean);
  const ScaledSum c = rows::allreduced_sums(rk_, {centred(st.minus_shift)}, 2)[0];
  // var(h) = 4 var(h/2): r = 1/sqrt(var(h/2) + eps/4) = 2 rstd.
  st.r = inverse_root(c, p_.options.eps * 0.25f);
  st.down = rows::power_of_two(k_, c.q, true);
  st.mean = k_.reg(f32);
  k_.add(st.mean, half_mean, half_mean, {Round::rn});
  st.scale = k_.reg(f32);
  k_.mul(st.scale, st.down, st.r, {Round::rn});
  st.rstd = k_.reg(f32);
  k_.mul(st.rstd, st.scale, imm_f32(0.5f), {Round::rn});
  return st;
}

Reg NormRow::neg(const Reg& v) {
  Reg n = k_.reg(f32);
  k_.neg(n, v);
  return n;
}

// Element 0 of the row of h (x, plus the residual rounded as h is).
Reg NormRow::first_element(const Reg& x, const Reg& residual, const Reg& row) {
  auto element = [&](const rows::RowMatrix& m, const Reg& base) {
    Reg address = rk_.row_address({m.dtype, base, m.row_stride}, row);
    Reg f = k_.reg(f32);
    if (m.dtype == runtime::DType::f32) {
      k_.ld(Space::global, f32, f, at(address));
    } else {
      Reg bits = k_.reg(b16);
      k_.ld(Space::global, b16, bits, at(address));
      k_.cvt(f32, m.dtype == runtime::DType::bf16 ? bf16 : f16, f, bits);
    }
    return f;
  };
  Reg first = element(p_.x, x);
  if (!p_.residual) return first;
  Reg total = sum(first, element(*p_.residual, residual));
  if (p_.residual_out->dtype == runtime::DType::f32) return total;
  const Type half = p_.residual_out->dtype == runtime::DType::bf16 ? bf16 : f16;
  Reg bits = k_.reg(b16), rounded = k_.reg(f32);
  k_.cvt(half, f32, bits, total, {Round::rn});
  k_.cvt(f32, half, rounded, bits);
  return rounded;
}

// y = (h·half - shift) · scale (· weight + bias) for element e of vector j:
// one multiply where (v · down) · r took two, the same value but where v ·
// down falls below the normals (values beside others 2^94 times larger).
Reg NormRow::output(const RowFragment& h, const Statistics& s, const std::optional<RowFragment>& w,
                  const std::optional<RowFragment>& b, int j, int e) {
  Reg v = h.value(j, e);
  if (s.halved) {
    Reg c = k_.reg(f32);
    k_.fma(c, v, imm_f32(0.5f), s.minus_shift);
    v = c;
  }
  Reg y = k_.reg(f32);
  k_.mul(y, v, s.scale, {Round::rn});
  v = y;
  if (w) k_.mul(v, v, w->value(j, e), {Round::rn});
  if (b) k_.add(v, v, b->value(j, e), {Round::rn});
  return v;
}


}  // namespace warpforge::ops
