// The normalizations' problems: what Norm and NormBackward read from their
// views (rows, the row length, each tensor's dtype, row stride and
// alignment), with every reason they refuse, and the launch shape chosen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../rows/row_shape.hpp"
#include "../rows/row_views.hpp"
#include "warpforge/ops/norm.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops {

struct NormProblem {
  NormOptions options;
  std::int64_t rows = 0, n = 0;
  rows::RowMatrix x, y;
  std::optional<rows::RowMatrix> residual, residual_out, weight, bias;
  bool mean = false, rstd = false;
  rows::RowShapeRequest request;
  rows::RowShape shape;
  std::int64_t groups = 1;  // row groups of the grid, looping over the rows
  // The next row's loads issued before this row's reductions
  // (RowKernel::for_each_row_prefetched): where x (and the residual) are
  // 16-bit, whose words fit in registers twice.
  bool prefetch = false;
  // "rms 4096 x 8192 bf16 -> bf16, residual, weight bf16"
  std::string describe() const;
};

NormProblem describe_norm(const NormTensors& t, const NormOptions& options, const runtime::Device& device,
                          std::vector<std::string>& why);

struct NormBackwardProblem {
  NormOptions options;
  std::int64_t rows = 0, n = 0;
  rows::RowMatrix dy, x, dx;
  std::optional<rows::RowMatrix> dresidual_out, weight, dweight, dbias;
  rows::RowShapeRequest request;
  rows::RowShape shape;
  std::int64_t groups = 0;  // row groups of the grid (each adds its rows' dweight, dbias)
  bool prefetch = false;    // as NormProblem's: dy and x 16-bit
  std::string describe() const;
  // Bytes of the row groups' sums (dweight, then dbias): groups x n f32 each.
  std::size_t workspace_bytes() const;
  // Dynamic shared memory of the kernel's CTA: its threads' running sums of
  // dweight and dbias (an f32 an element a thread holds, each).
  std::uint32_t sums_shared_bytes() const;
};

NormBackwardProblem describe_norm_backward(const NormBackwardTensors& t, const NormOptions& options,
                                           const runtime::Device& device, std::vector<std::string>& why);

}  // namespace warpforge::ops
