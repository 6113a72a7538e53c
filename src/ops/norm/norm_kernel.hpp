// The normalizations' kernels, on the row kernel skeleton (rows/row_kernel.hpp).
//
// Forward (rms_norm / layer_norm), each row group a row at a time (with
// 16-bit rows the next row's loads issued before this row's reductions):
//   h = x (+ residual, rounded to residual_out's dtype and stored)
//   rms:   (q, s) = scaled Σ h² (rows/scaled_sum.hpp); rstd = 1/sqrt(s/n + eps)
//          (from 2^32 on: rstd = 2^-q / sqrt(s/n), eps being negligible there);
//          y = h · 2^-q · r · weight
//   layer: the row's first element p is subtracted and every value halved
//          (exact, and no difference overflows): mean/2 = p/2 + scaled Σ (h/2 - p/2) / n;
//          c = h/2 - mean/2; (q, s) = scaled Σ c²; y = c · 2^-q · r · weight + bias with
//          r = 1/sqrt(s/n + eps/4) (eps negligible from 2^32 on), the same value
//          as (h - mean)/sqrt(var + eps) since var = 4 · var(h/2).
//   Weight and bias are loaded a vector at a time after the statistics (not
//   held across the row). Layer norm's sums are allreduced_sums (plain, taken
//   again scaled where not finite). The leader thread writes mean and rstd
//   (f32) where asked.
//   Parameters: x, residual, weight, bias, y, residual_out, mean, rstd (u64;
//   those of the problem, in this order), rows (u32).
//
// Backward, each row group looping over rows row = group, group + groups, ...:
//   xhat = (h - mean) · rstd (h/2 - mean/2 times 2·rstd: no overflow), g = dy · weight
//   rms:   dx = rstd · (g - xhat · mean(g · xhat))
//   layer: dx = rstd · (g - mean(g) - xhat · mean(g · xhat))
//   dx += dresidual_out; the group adds dy · xhat (dweight) and dy (dbias) of
//   its rows in f32, each thread in its own slots of shared memory (dynamic:
//   NormBackwardProblem::sums_shared_bytes), and writes them as row `group`
//   of the workspace (dweight's groups x n, then dbias's). With 16-bit dy
//   and x, the next row's are loaded before this row's reductions.
//   Parameters: dy, x, weight, mean, rstd, dresidual_out, dx, workspace (u64;
//   those of the problem, in this order), rows (u32).
//
// Column sums: dweight[c] = Σ over groups of workspace[group][c], in a
// fixed order (deterministic), rounded to dweight's dtype, and dbias from
// the second block of sums in the same launch (the grid's second row of
// CTAs). A CTA of 32 x 16 threads takes 32 columns: each warp adds every
// 16th group, then warp 0 adds the 16 in order (half the loads a thread of
// 8 warps took); a thread issues 16 loads before adding them (a round trip
// to L2 for 16 groups, not one a group: 132-528 groups on an H200, 9-33 a
// thread). On sm_90 on it is launched to overlap the backward kernel
// (programmatic dependent launch: that kernel lets it start once its CTAs
// run; it waits, griddepcontrol.wait, before reading the sums), so that its
// launch is not between the two.
//   Parameters: first_sums, second_sums, first_out, second_out (u64; the
//   second pair unused with one sum), groups, n (u32).
#pragma once

#include <optional>

#include "norm_problem.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/backend.hpp"

namespace warpforge::ops {

ptx::Module build_norm_kernel(const NormProblem& problem, ptx::Target target);
ptx::Module build_norm_backward_kernel(const NormBackwardProblem& problem, ptx::Target target);
// first: dweight's dtype (or dbias's where there is no dweight); second: dbias's, where both are summed.
ptx::Module build_column_sum_kernel(runtime::DType first, std::optional<runtime::DType> second, ptx::Target target);

std::string norm_kernel_name(const NormProblem& problem);
std::string norm_backward_kernel_name(const NormBackwardProblem& problem);
inline constexpr const char* kColumnSumKernel = "warpforge_norm_column_sum";
// The column-sum kernel's launch for n columns of `sums` blocks (1 or 2),
// overlapping the backward kernel where `overlap` (both built for sm_90 on).
runtime::LaunchConfig column_sum_launch(std::int64_t n, int sums, bool overlap);

}  // namespace warpforge::ops
