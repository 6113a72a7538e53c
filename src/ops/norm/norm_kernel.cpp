// The forward normalization kernel (norm_kernel.hpp).
#include "norm_kernel.hpp"

#include "../rows/row_kernel.hpp"
#include "../rows/scaled_sum.hpp"

namespace warpforge::ops {

using namespace dsl;
using rows::RowFragment;
using rows::RowKernel;
using rows::RowOperand;
using rows::ScaledSum;

namespace {

class NormKernel {
 public:
  NormKernel(const NormProblem& p, Target target) : p_(p), k_(norm_kernel_name(p), target) {}

  ptx::Module build() {
    auto tensor = [&](const std::optional<rows::RowMatrix>& m, const char* name) {
      return m ? rows::row_param(k_, name, p_.shape, m->dtype) : Reg{};
    };
    auto statistic = [&](bool present, const char* name) { return present ? k_.param_ptr(name, 4) : Reg{}; };
    Reg x = tensor(p_.x, "x"), residual = tensor(p_.residual, "residual"), weight = tensor(p_.weight, "weight"),
        bias = tensor(p_.bias, "bias"), y = tensor(p_.y, "y"), residual_out = tensor(p_.residual_out, "residual_out"),
        mean = statistic(p_.mean, "mean"), rstd = statistic(p_.rstd, "rstd");
    Reg rows = k_.param(u32, "rows");
    RowKernel rk(k_, p_.shape, p_.n, "norm");
    const RowOperand x_in{p_.x.dtype, x, p_.x.row_stride}, y_out{p_.y.dtype, y, p_.y.row_stride};
    // Weight and bias are the same for every row: loaded once.
    std::optional<RowFragment> w, b;
    if (p_.weight) w = rk.load({p_.weight->dtype, weight, 0}, nullptr, 1.0f);
    if (p_.bias) b = rk.load({p_.bias->dtype, bias, 0}, nullptr, 0.0f);

    rk.for_each_row(rows, [&](const Reg& row) {
      RowFragment h = rk.load(x_in, &row, 0.0f);
      if (p_.residual) {
        const RowOperand r_in{p_.residual->dtype, residual, p_.residual->row_stride},
            h_out{p_.residual_out->dtype, residual_out, p_.residual_out->row_stride};
        RowFragment r = rk.load(r_in, &row, 0.0f);
        h = rk.pack(h_out.dtype, [&](int j, int e) { return sum(h.value(j, e), r.value(j, e)); });
        rk.store(h_out, &row, h);
      }
      const Statistics s = p_.options.kind == NormKind::rms ? rms(rk, h) : layer(rk, h, x, residual, row);
      rk.store(y_out, &row, [&](int j, int e) {
        Reg v = scaled(h, s, j, e);
        Reg out = k_.reg(f32);
        if (w)
          k_.mul(out, v, w->value(j, e), {Round::rn});
        else
          out = v;
        if (b) k_.add(out, out, b->value(j, e), {Round::rn});
        return out;
      });
      k_.guarded(rk.leader(), [&] {
        Reg at_row = k_.reg(u64);
        k_.mul_wide(at_row, row, 4);
        if (p_.mean) k_.st(Space::global, f32, at(mean + at_row), s.mean);
        if (p_.rstd) k_.st(Space::global, f32, at(rstd + at_row), s.rstd);
      });
    });
    return k_.module();
  }

 private:
  // What the output pass needs of a row: y = (h·half - shift) · down · r
  // (rms: half 1, shift 0), and the statistics the backward keeps.
  struct Statistics {
    Reg minus_shift, down, r;
    Reg mean, rstd;
    bool halved = false;
  };

  Reg sum(const Reg& a, const Reg& b) {
    Reg s = k_.reg(f32);
    k_.add(s, a, b, {Round::rn});
    return s;
  }

  // 1/sqrt(s/n + eps') where the sum was not scaled, else 1/sqrt(s/n) (the
  // values reach 2^32, so the mean square is at least 2^64/n: eps' is lost
  // beside it); rsqrt.approx (PTX ISA 9.7.3.18, as PyTorch's rsqrtf).
  Reg inverse_root(const ScaledSum& s, float eps) {
    Reg mean_square = k_.div(s.s, imm_f32(static_cast<float>(p_.n)), {Round::rn});
    Reg with_eps = k_.reg(f32);
    k_.add(with_eps, mean_square, imm_f32(eps), {Round::rn});
    Reg r = k_.reg(f32);
    k_.inst("rsqrt.approx.f32", r, k_.selp(with_eps, mean_square, s.q == 0));
    return r;
  }

  Statistics rms(RowKernel& rk, const RowFragment& h) {
    ScaledSum s = rows::scaled_sum(rk, [&](int j, int e) { return h.value(j, e); }, 2);
    rk.allreduce(s.regs(), rows::combine_scaled_sums(2));
    Statistics st;
    st.r = inverse_root(s, p_.options.eps);
    st.down = rows::power_of_two(k_, s.q, true);
    st.rstd = k_.reg(f32);
    k_.mul(st.rstd, st.down, st.r, {Round::rn});
    return st;
  }

  Statistics layer(RowKernel& rk, const RowFragment& h, const Reg& x, const Reg& residual, const Reg& row) {
    Statistics st;
    st.halved = true;
    // The row's first element (h's, as rounded), read by every thread.
    Reg half_pivot = k_.reg(f32);
    k_.mul(half_pivot, first_element(rk, x, residual, row), imm_f32(0.5f), {Round::rn});
    auto centred = [&](const Reg& minus_shift) {
      return [&, minus_shift](int j, int e) {
        Reg c = k_.reg(f32);
        k_.fma(c, h.value(j, e), imm_f32(0.5f), minus_shift);
        return rk.in_row_or(j, c, imm_f32(0.0f));
      };
    };
    ScaledSum d = rows::scaled_sum(rk, centred(neg(half_pivot)), 1);
    rk.allreduce(d.regs(), rows::combine_scaled_sums(1));
    Reg half_mean = sum(half_pivot, rows::scaled_mean(k_, d, 1, p_.n));
    st.minus_shift = neg(half_mean);
    ScaledSum c = rows::scaled_sum(rk, centred(st.minus_shift), 2);
    rk.allreduce(c.regs(), rows::combine_scaled_sums(2));
    // var(h) = 4 var(h/2): r = 1/sqrt(var(h/2) + eps/4) = 2 rstd.
    st.r = inverse_root(c, p_.options.eps * 0.25f);
    st.down = rows::power_of_two(k_, c.q, true);
    st.mean = k_.reg(f32);
    k_.add(st.mean, half_mean, half_mean, {Round::rn});
    st.rstd = k_.reg(f32);
    k_.mul(st.rstd, st.down, st.r, {Round::rn});
    k_.mul(st.rstd, st.rstd, imm_f32(0.5f), {Round::rn});
    return st;
  }

  Reg neg(const Reg& v) {
    Reg n = k_.reg(f32);
    k_.neg(n, v);
    return n;
  }

  // Element 0 of the row of h (x, plus the residual rounded as h is).
  Reg first_element(const RowKernel& rk, const Reg& x, const Reg& residual, const Reg& row) {
    auto element = [&](const rows::RowMatrix& m, const Reg& base) {
      Reg address = rk.row_address({m.dtype, base, m.row_stride}, row);
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

  // (h·half - shift) · down · r for element e of vector j.
  Reg scaled(const RowFragment& h, const Statistics& s, int j, int e) {
    Reg v = k_.reg(f32);
    if (s.halved)
      k_.fma(v, h.value(j, e), imm_f32(0.5f), s.minus_shift);
    else
      k_.mov(v, h.value(j, e));
    k_.mul(v, v, s.down, {Round::rn});
    k_.mul(v, v, s.r, {Round::rn});
    return v;
  }

  const NormProblem& p_;
  Kernel k_;
};

}  // namespace

std::string norm_kernel_name(const NormProblem& p) {
  return std::string("warpforge_") + (p.options.kind == NormKind::rms ? "rms_norm" : "layer_norm");
}

ptx::Module build_norm_kernel(const NormProblem& problem, Target target) {
  return NormKernel(problem, target).build();
}

}  // namespace warpforge::ops
