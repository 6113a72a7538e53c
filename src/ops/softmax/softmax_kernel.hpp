// The softmax kernels, on the row kernel skeleton (rows/row_kernel.hpp):
//   forward: x held in registers (vectors past the row -inf); one allreduce
//            of the online softmax's (max, sum) (rows/online_softmax.hpp);
//            y = exp(x - max) · (1 / sum), the reciprocal rcp.rn once a row.
//            Parameters: x, y (u64), rows (u32).
//   backward: y and dy held; c = Σ dy·y (rows/scaled_sum.hpp, overflow-safe);
//            dx = y · (dy - c). Parameters: y, dy, dx (u64), rows (u32).
// Rows longer than a cluster of 8 CTAs holds (RowShape::chunks > 1) are read
// in passes: the statistics combined pass by pass in each thread (the online
// softmax's point: no pass needs the final maximum), one allreduce, then the
// passes again for the output (x read twice; y and dy twice).
#pragma once

#include <cstdint>
#include <string>

#include "../rows/row_shape.hpp"
#include "../rows/row_views.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::ops {

struct SoftmaxProblem {
  bool backward = false;
  std::int64_t rows = 0, n = 0;
  rows::RowMatrix x, y;  // forward: x -> y; backward: y and x (= dy) -> dx in `out`
  rows::RowMatrix out;   // backward: dx
  rows::RowShape shape;
};

inline constexpr const char* kSoftmaxKernel = "warpforge_softmax";
inline constexpr const char* kSoftmaxBackwardKernel = "warpforge_softmax_backward";

ptx::Module build_softmax_kernel(const SoftmaxProblem& problem, ptx::Target target);

}  // namespace warpforge::ops
