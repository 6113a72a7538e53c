// The forward normalization's arithmetic on one row (the formulas of
// norm_kernel.hpp), shared by the norm kernel and the norm + quantize kernel
// so that both compute the same bits: the row's h (x, or x + residual
// rounded to residual_out's dtype and stored), its statistics, and y =
// normalized · weight (+ bias) of each element.
#pragma once

#include <optional>

#include "../rows/row_kernel.hpp"
#include "../rows/scaled_sum.hpp"
#include "norm_problem.hpp"

namespace warpforge::ops {

class NormRow {
 public:
  // What the output pass needs of a row: y = (h·half - shift) · scale, scale
  // = down · r (exact: down a power of two) (rms: half 1, shift 0), and the
  // statistics the backward keeps.
  struct Statistics {
    dsl::Reg minus_shift, down, r, scale;
    dsl::Reg mean, rstd;
    bool halved = false;
  };

  // How RMSNorm's Σ h² is allreduced: the scaled sums' combination in one
  // allreduce (the norm kernel's), or a plain f32 sum, scaled again only
  // where it is not finite (rows::allreduced_sums: the norm + quantize
  // kernel's, whose other work per element leaves the combination's cost
  // unspread). The same bits unless a value reaches 2^32.
  enum class SquareSum { combined, plain_first };

  // p: its options (kind, eps), n, x, residual and residual_out.
  // `interleave`: plain_first's threads each stand for that many of the norm
  // kernel's (rows::allreduced_sums), whose bits they give.
  NormRow(rows::RowKernel& rk, const NormProblem& p, SquareSum square_sum = SquareSum::combined, int interleave = 1)
      : rk_(rk), k_(rk.kernel()), p_(p), square_sum_(square_sum), interleave_(interleave) {}

  // h of row `row` (the tensors' base addresses; residual ones unused without a residual).
  rows::RowFragment input(const dsl::Reg& x, const dsl::Reg& residual, const dsl::Reg& residual_out,
                          const dsl::Reg& row);
  // The same in two steps: the loads of row `row` (x, and the residual),
  // then h from them (storing residual_out).
  std::vector<rows::RowFragment> load(const dsl::Reg& x, const dsl::Reg& residual, const dsl::Reg& row);
  rows::RowFragment input(const std::vector<rows::RowFragment>& loaded, const dsl::Reg& residual_out,
                          const dsl::Reg& row);
  Statistics statistics(const rows::RowFragment& h, const dsl::Reg& x, const dsl::Reg& residual, const dsl::Reg& row);
  // y of element e of vector j: normalized, times the weight, plus the bias (each where given).
  dsl::Reg output(const rows::RowFragment& h, const Statistics& s, const std::optional<rows::RowFragment>& w,
                  const std::optional<rows::RowFragment>& b, int j, int e);

 private:
  Statistics rms(const rows::RowFragment& h);
  Statistics layer(const rows::RowFragment& h, const dsl::Reg& x, const dsl::Reg& residual, const dsl::Reg& row);
  dsl::Reg inverse_root(const rows::ScaledSum& s, float eps);
  dsl::Reg first_element(const dsl::Reg& x, const dsl::Reg& residual, const dsl::Reg& row);
  dsl::Reg sum(const dsl::Reg& a, const dsl::Reg& b);
  dsl::Reg neg(const dsl::Reg& v);

  rows::RowKernel& rk_;
  dsl::Kernel& k_;
  const NormProblem& p_;
  SquareSum square_sum_;
  int interleave_;
};

}  // namespace warpforge::ops
