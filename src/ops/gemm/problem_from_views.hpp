// Reading a GemmProblem off the operands' TensorViews, with every reason the
// views do not describe a GEMM that ops::Gemm accepts (dtypes, ranks,
// shapes, strides, batches, devices, alpha/beta against C).
#pragma once

#include <string>
#include <vector>

#include "gemm_problem.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

struct ProblemFromViews {
  GemmProblem problem;  // meaningful only when `refusals` is empty
  std::vector<std::string> refusals;
};

ProblemFromViews problem_from_views(const runtime::TensorView& a, const runtime::TensorView& b,
                                    const runtime::TensorView* c, const runtime::TensorView& d,
                                    const GemmOptions& options);

}  // namespace warpforge::ops
