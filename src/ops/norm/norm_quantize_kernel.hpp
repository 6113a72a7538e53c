// The RMSNorm + quantize kernel (warpforge/ops/norm_quantize.hpp), on the row
// skeleton with the norm's row arithmetic (norm_row.hpp). Each row group
// loops over the scale layout's padded rows: a row of x gives y (NormRow,
// or x · weight without normalizing; its Σ h² a plain f32 sum, scaled again
// only where that is not finite: the norm kernel's bits in about a third of
// the instructions its combination of scaled sums takes); each quantization
// block of `vec` elements spans vec / vector adjacent lanes (one vector a
// lane), whose largest |y| a butterfly of shfl.sync (u32 max of the
// magnitudes' bits: a NaN wins, PTX ISA 9.7.8.6) gives every lane of the
// block; its scale as ops::quantize picks it (e8m0: floor(log2 amax) - emax,
// clamped; e4m3: amax / 6 rounded, 1 where it is 0); the codes y / scale
// rounded to nearest even and saturated (cvt.rn.satfinite.e4m3x2/e5m2x2.f32,
// PTX ISA 9.7.9.21; E2M1 by emit_e2m1_codes, a word at a time), stored k-major; the
// block's first lane writes its scale byte at the 128x4 layout's offset.
// Padding rows (past the last, up to 128 · RM) get zero scales.
// Parameters: x, residual, weight, data, scales, residual_out, rstd, y (u64:
// those of the problem, in this order), rows (u32).
#pragma once

#include "norm_problem.hpp"
#include "warpforge/ops/norm_quantize.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::ops {

struct NormQuantizeProblem {
  NormProblem norm;  // x, residual, residual_out, weight, rstd, y (as the forward's y), n = K, rows, shape
  NormQuantizeOptions options;
  std::int64_t data_row_stride = 0;  // bytes
  bool y = false;
  std::int64_t padded_rows() const { return (norm.rows + 127) / 128 * 128; }
  std::string describe() const;
};

inline constexpr const char* kNormQuantizeKernel = "warpforge_rms_norm_quantize";

ptx::Module build_norm_quantize_kernel(const NormQuantizeProblem& problem, ptx::Target target);

}  // namespace warpforge::ops
