// The SwiGLU kernels (swiglu_kernel.hpp).
#include "swiglu_kernel.hpp"

#include "../rows/row_kernel.hpp"

namespace warpforge::ops {

using namespace dsl;
using rows::RowFragment;
using rows::RowKernel;
using rows::RowOperand;

namespace {

constexpr float kLog2e = 1.44269504088896340736f;

// σ(g) = 1 / (1 + exp(-g)).
Reg sigmoid(Kernel& k, const Reg& g) {
  Reg t = k.reg(f32), e = k.reg(f32), s = k.reg(f32);
  k.mul(t, g, imm_f32(-kLog2e), {Round::rn});
  k.ex2_approx(e, t);
  k.add(e, e, imm_f32(1.0f), {Round::rn});
  k.rcp(s, e);  // rcp.approx.f32
  return s;
}

Reg product(Kernel& k, const Reg& a, const Reg& b) {
  Reg p = k.reg(f32);
  k.mul(p, a, b, {Round::rn});
  return p;
}

ptx::Module build(const SwigluProblem& p, Target target) {
  Kernel k(p.backward ? kSwigluBackwardKernel : kSwigluKernel, target);
  auto param = [&](const char* name, const rows::RowMatrix& m, int interleave = 1) {
    return rows::row_param(k, name, p.shape, m.dtype, interleave);
  };
  Reg dout = p.backward ? param("dout", p.out) : Reg{};
  Reg gate, up, x;
  if (p.interleaved)
    x = param("x", p.x, 2);
  else
    gate = param("gate", p.gate), up = param("up", p.up);
  Reg out, dgate, dup, dx;
  if (!p.backward)
    out = param("out", p.out);
  else if (p.interleaved)
    dx = param("dx", p.dx, 2);
  else
    dgate = param("dgate", p.dgate), dup = param("dup", p.dup);
  Reg rows = k.param(u32, "rows");
  RowKernel rk(k, p.shape, p.n, "swiglu");
  // One pass over a row, or (rows longer than a CTA holds) each of several.
  auto pass = [&](const Reg& row, const Reg* chunk) {
    // g(j, e) and u(j, e): from gate and up, or the even and odd elements of x.
    std::optional<RowFragment> g_in, u_in, x_in;
    if (p.interleaved) {
      x_in = rk.load({p.x.dtype, x, p.x.row_stride, 2}, &row, 0.0f, chunk);
    } else {
      g_in = rk.load({p.gate.dtype, gate, p.gate.row_stride}, &row, 0.0f, chunk);
      u_in = rk.load({p.up.dtype, up, p.up.row_stride}, &row, 0.0f, chunk);
    }
    auto g = [&](int j, int e) { return p.interleaved ? x_in->value(j, 2 * e) : g_in->value(j, e); };
    auto u = [&](int j, int e) { return p.interleaved ? x_in->value(j, 2 * e + 1) : u_in->value(j, e); };
    if (!p.backward) {
      rk.store({p.out.dtype, out, p.out.row_stride}, &row,
               [&](int j, int e) { return product(k, product(k, g(j, e), sigmoid(k, g(j, e))), u(j, e)); }, chunk);
      return;
    }
    RowFragment d = rk.load({p.out.dtype, dout, p.out.row_stride}, &row, 0.0f, chunk);
    // dgate = dout · u · σ · (1 + g · (1 - σ)); dup = dout · g · σ.
    auto dgate_of = [&](int j, int e) {
      Reg s = sigmoid(k, g(j, e)), one_minus = k.reg(f32), factor = k.reg(f32);
      k.sub(one_minus, imm_f32(1.0f), s, {Round::rn});
      k.fma(factor, g(j, e), one_minus, imm_f32(1.0f));
      return product(k, product(k, product(k, d.value(j, e), u(j, e)), s), factor);
    };
    auto dup_of = [&](int j, int e) { return product(k, d.value(j, e), product(k, g(j, e), sigmoid(k, g(j, e)))); };
    if (p.interleaved) {
      rk.store({p.dx.dtype, dx, p.dx.row_stride, 2}, &row,
               [&](int j, int e) { return e % 2 == 0 ? dgate_of(j, e / 2) : dup_of(j, e / 2); }, chunk);
    } else {
      rk.store({p.dgate.dtype, dgate, p.dgate.row_stride}, &row, dgate_of, chunk);
      rk.store({p.dup.dtype, dup, p.dup.row_stride}, &row, dup_of, chunk);
    }
  };
  rk.for_each_row(rows, [&](const Reg& row) {
    if (p.shape.chunks == 1) return pass(row, nullptr);
    rk.for_each_chunk([&](const Reg& chunk) { pass(row, &chunk); });
  });
  return k.module();
}

}  // namespace

ptx::Module build_swiglu_kernel(const SwigluProblem& problem, Target target) {
  return build(problem, target);
}

}  // namespace warpforge::ops
