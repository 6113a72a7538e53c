// The softmax kernels (softmax_kernel.hpp).
#include "softmax_kernel.hpp"

#include <limits>

#include "../rows/online_softmax.hpp"
#include "../rows/row_kernel.hpp"
#include "../rows/scaled_sum.hpp"

namespace warpforge::ops {

using namespace dsl;
using rows::RowFragment;
using rows::RowKernel;

namespace {

ptx::Module forward(const SoftmaxProblem& p, Target target) {
  Kernel k(kSoftmaxKernel, target);
  Reg x = rows::row_param(k, "x", p.shape, p.x.dtype), y = rows::row_param(k, "y", p.shape, p.y.dtype);
  Reg rows = k.param(u32, "rows");
  RowKernel rk(k, p.shape, p.n, "softmax");
  const rows::RowOperand in{p.x.dtype, x, p.x.row_stride}, out{p.y.dtype, y, p.y.row_stride};
  const float minus_inf = -std::numeric_limits<float>::infinity();
  // y = exp(v - max) / sum from the row's statistics.
  auto output = [&](const RowFragment& v, const rows::OnlineSoftmax& s, const Reg& row, const Reg* chunk) {
    Reg shift = rows::safe_max(k, s.max), inverse = k.reg(f32);
    k.rcp(inverse, s.sum, {Round::rn});
    rk.store(out, &row, [&](int j, int e) {
      Reg o = k.reg(f32);
      k.mul(o, rows::exp_shifted(k, v.value(j, e), shift), inverse, {Round::rn});
      return o;
    }, chunk);
  };
  rk.for_each_row(rows, [&](const Reg& row) {
    if (p.shape.chunks == 1) {  // the row held in registers: read once
      RowFragment v = rk.load(in, &row, minus_inf);
      rows::OnlineSoftmax s = rows::online_softmax(rk, [&](int j, int e) { return v.value(j, e); });
      rk.allreduce(s.regs(), rows::combine_online_softmax());
      output(v, s, row, nullptr);
      return;
    }
    // Longer rows: the statistics over every pass, then each pass again.
    rows::OnlineSoftmax s{k.mov(f32, imm_f32(minus_inf)), k.mov(f32, imm_f32(0.0f))};
    rk.for_each_chunk([&](const Reg& chunk) {
      RowFragment v = rk.load(in, &row, minus_inf, &chunk);
      rows::OnlineSoftmax part = rows::online_softmax(rk, [&](int j, int e) { return v.value(j, e); });
      rows::combine_online_softmax()(k, s.regs(), part.regs());
    });
    rk.allreduce(s.regs(), rows::combine_online_softmax());
    rk.for_each_chunk([&](const Reg& chunk) { output(rk.load(in, &row, minus_inf, &chunk), s, row, &chunk); });
  });
  return k.module();
}

ptx::Module backward(const SoftmaxProblem& p, Target target) {
  Kernel k(kSoftmaxBackwardKernel, target);
  Reg y = rows::row_param(k, "y", p.shape, p.y.dtype), dy = rows::row_param(k, "dy", p.shape, p.x.dtype),
      dx = rows::row_param(k, "dx", p.shape, p.out.dtype);
  Reg rows = k.param(u32, "rows");
  RowKernel rk(k, p.shape, p.n, "softmax_backward");
  const rows::RowOperand y_in{p.y.dtype, y, p.y.row_stride}, dy_in{p.x.dtype, dy, p.x.row_stride},
      dx_out{p.out.dtype, dx, p.out.row_stride};
  auto dot = [&](const RowFragment& yv, const RowFragment& g) {
    return rows::scaled_sum(rk, [&](int j, int e) {
      Reg t = k.reg(f32);
      k.mul(t, yv.value(j, e), g.value(j, e), {Round::rn});
      return t;
    }, 1);
  };
  // dx = y · (dy - c).
  auto output = [&](const RowFragment& yv, const RowFragment& g, const Reg& minus_c, const Reg& row, const Reg* chunk) {
    rk.store(dx_out, &row, [&](int j, int e) {
      Reg o = k.reg(f32);
      k.add(o, g.value(j, e), minus_c, {Round::rn});
      k.mul(o, o, yv.value(j, e), {Round::rn});
      return o;
    }, chunk);
  };
  auto minus = [&](const rows::ScaledSum& s) {
    Reg m = k.reg(f32);
    k.neg(m, rows::scaled_mean(k, s, 1, 1));
    return m;
  };
  rk.for_each_row(rows, [&](const Reg& row) {
    if (p.shape.chunks == 1) {  // y and dy held in registers: read once
      RowFragment yv = rk.load(y_in, &row, 0.0f), g = rk.load(dy_in, &row, 0.0f);
      rows::ScaledSum s = dot(yv, g);
      rk.allreduce(s.regs(), rows::combine_scaled_sums(1));
      output(yv, g, minus(s), row, nullptr);
      return;
    }
    rows::ScaledSum s{k.mov(s32, 0), k.mov(f32, imm_f32(0.0f))};
    rk.for_each_chunk([&](const Reg& chunk) {
      rows::ScaledSum part = dot(rk.load(y_in, &row, 0.0f, &chunk), rk.load(dy_in, &row, 0.0f, &chunk));
      rows::combine_scaled_sums(1)(k, s.regs(), part.regs());
    });
    rk.allreduce(s.regs(), rows::combine_scaled_sums(1));
    Reg minus_c = minus(s);
    rk.for_each_chunk([&](const Reg& chunk) {
      output(rk.load(y_in, &row, 0.0f, &chunk), rk.load(dy_in, &row, 0.0f, &chunk), minus_c, row, &chunk);
    });
  });
  return k.module();
}

}  // namespace

ptx::Module build_softmax_kernel(const SoftmaxProblem& problem, Target target) {
  return problem.backward ? backward(problem, target) : forward(problem, target);
}

}  // namespace warpforge::ops
