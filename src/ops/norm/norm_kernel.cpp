// The forward normalization kernel (norm_kernel.hpp).
#include "norm_kernel.hpp"

#include "../rows/row_kernel.hpp"
#include "norm_row.hpp"

namespace warpforge::ops {

using namespace dsl;
using rows::RowFragment;
using rows::RowKernel;

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
    NormRow norm(rk, p_);
    auto loads = [&](const Reg& row) { return norm.load(x, residual, row); };
    auto body = [&](const Reg& row, const std::vector<RowFragment>& loaded) {
      RowFragment h = norm.input(loaded, residual_out, row);
      const NormRow::Statistics s = norm.statistics(h, x, residual, row);
      // Weight and bias (the same for every row, cached) are loaded a vector
      // at a time next to their use, after the statistics: not held across
      // the reductions, they leave the registers to more of the row's loads.
      for (int j = 0; j < p_.shape.vectors; ++j) {
        std::optional<RowFragment> w, b;
        if (p_.weight) w = rk.load_vector({p_.weight->dtype, weight, 0}, nullptr, 1.0f, j);
        if (p_.bias) b = rk.load_vector({p_.bias->dtype, bias, 0}, nullptr, 0.0f, j);
        rk.store_vector({p_.y.dtype, y, p_.y.row_stride}, &row, j,
                        [&](int e) { return norm.output(h, s, w, b, j, e); });
      }
      k_.guarded(rk.leader(), [&] {
        Reg at_row = k_.reg(u64);
        k_.mul_wide(at_row, row, 4);
        if (p_.mean) k_.st(Space::global, f32, at(mean + at_row), s.mean);
        if (p_.rstd) k_.st(Space::global, f32, at(rstd + at_row), s.rstd);
      });
    };
    if (p_.prefetch)
      rk.for_each_row_prefetched(rows, rows, loads, body);
    else
      rk.for_each_row(rows, [&](const Reg& row) { body(row, loads(row)); });
    return k_.module();
  }

 private:
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
