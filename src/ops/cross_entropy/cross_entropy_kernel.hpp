// The cross-entropy kernels (warpforge/ops/cross_entropy.hpp):
//
// count (mean only): CTA c counts the labels that are not the ignore index
//   in its slice of the rows (redux.sync.add, then the CTA's warps) into
//   counts[c]. Parameters: labels (u64), counts (u64), rows (u32).
// main: each row group (a persistent grid) loops over its rows: the logits
//   held in registers as their exponentials exp(x - m_t) (m_t the thread's
//   maximum; 16-bit rows held: the next row's loads issued first, the
//   exponentials kept in shared memory), an allreduce of the max M, then one
//   of the sums rescaled to it, the smoothing's scaled Σ x and the target
//   logit (added from the thread that holds it, so that the gradient may
//   overwrite the logits; a row read in passes: one allreduce of the online
//   softmax's (max, sum) and those); then lse = M + ln S, the loss, and the
//   gradient p - (1 - ε)[target] - ε/V (p = exp(x - m_t) · exp(m_t - M) / S) times
//   1/count (mean) written over the row (held rows: the target's element
//   again, by its thread). Rows longer than a cluster holds are read twice
//   (passes). With mean or sum each group adds its rows' losses and writes
//   the sum as partials[group]. Parameters: logits, labels, dlogits, lse,
//   loss (rows, for none), workspace (u64; those of the problem), rows (u32).
// finalize (mean and sum): one CTA adds the groups' sums in a fixed order
//   and divides by the count. Parameters: workspace, loss (u64).
// scale: dlogits *= dloss (one or a row); rows whose dloss is 1 are skipped.
//   Parameters: dlogits, dloss (u64), rows (u32).
#pragma once

#include <cstdint>
#include <optional>

#include "../rows/row_shape.hpp"
#include "../rows/row_views.hpp"
#include "warpforge/ops/cross_entropy.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/backend.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

struct CrossEntropyProblem {
  CrossEntropyOptions options;
  std::int64_t rows = 0, v = 0;
  rows::RowMatrix logits;
  runtime::DType labels = runtime::DType::i64;
  std::optional<rows::RowMatrix> dlogits;
  bool lse = false;
  rows::RowShape shape;
  std::int64_t groups = 1;  // row groups of the main kernel's grid
  int count_ctas = 1;       // CTAs of the count kernel

  bool reduced() const { return options.reduction != LossReduction::none; }
  // Whether the device's shared memory a CTA holds the staged exponentials
  // (staged_bytes(); up to 128 KB: not on every sm_8x).
  bool staging_fits = true;
  // The next row's logits loaded before this row's reductions
  // (RowKernel::for_each_row_prefetched): rows held in registers, in a 16-bit
  // dtype (whose words fit in registers twice), without label smoothing
  // (whose Σ x spills then: row_ops_ptxas_test.cpp), the exponentials staged.
  bool prefetch() const {
    return shape.chunks == 1 && runtime::bits(logits.dtype) == 16 && options.label_smoothing == 0.0f &&
           staging_fits;
  }
  // The threads' exponentials staged in shared memory (an f32 an element a
  // thread holds), and the main kernel's dynamic shared memory: those with
  // prefetch, else none.
  std::uint32_t staged_bytes() const;
  std::uint32_t shared_bytes() const { return prefetch() ? staged_bytes() : 0; }
  // Workspace: the counts (count_ctas u32), then the groups' loss sums (f32) from a 16-byte boundary.
  std::size_t partials_offset() const { return (static_cast<std::size_t>(count_ctas) * 4 + 15) / 16 * 16; }
  std::size_t workspace_bytes() const {
    return reduced() ? partials_offset() + static_cast<std::size_t>(groups) * 4 : 0;
  }
};

inline constexpr const char* kCrossEntropyCount = "warpforge_cross_entropy_count";
inline constexpr const char* kCrossEntropyKernel = "warpforge_cross_entropy";
inline constexpr const char* kCrossEntropyFinalize = "warpforge_cross_entropy_finalize";
inline constexpr const char* kCrossEntropyScale = "warpforge_cross_entropy_scale";
inline constexpr int kCrossEntropyCountThreads = 256;  // and the finalize kernel's

ptx::Module build_cross_entropy_count_kernel(const CrossEntropyProblem& problem, ptx::Target target);
ptx::Module build_cross_entropy_kernel(const CrossEntropyProblem& problem, ptx::Target target);
ptx::Module build_cross_entropy_finalize_kernel(const CrossEntropyProblem& problem, ptx::Target target);

// The scale kernel for a dlogits of `dtype`, `v` elements a row, shape `shape`; per_row: dloss one a row.
ptx::Module build_cross_entropy_scale_kernel(runtime::DType dtype, std::int64_t v, const rows::RowShape& shape,
                                             bool per_row, ptx::Target target);

}  // namespace warpforge::ops
