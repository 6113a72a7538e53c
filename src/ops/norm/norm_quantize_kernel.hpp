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
  // Threads of the norm's shape that a thread stands for (its Σ h² that
  // shape's bits, so y is ops::Norm's): choose_norm_quantize_shape.
  int interleave = 1;
  std::int64_t padded_rows() const { return (norm.rows + 127) / 128 * 128; }
  std::string describe() const;
};

inline constexpr const char* kNormQuantizeKernel = "warpforge_rms_norm_quantize";

ptx::Module build_norm_quantize_kernel(const NormQuantizeProblem& problem, ptx::Target target);

// The row shape for the problem's rows (norm.shape, norm.request,
// interleave): the norm's (4 vectors a thread at 1024 threads an SM) where
// the rows fit in the row groups resident at once (a layer's decode: a row's
// latency is the time, and 4 vectors a thread halve each thread's chain),
// else, where that shape is one CTA of 64 threads or more, half its threads
// at twice the vectors and 512 threads an SM (128 registers): each thread
// stands for two of the norm's (interleave 2), its row's reductions and
// other work a row spread over twice the elements, where the GPU is full
// and instruction issue bounds the kernel (nvfp4 4096 x 4096, bf16: 751 ->
// 1367 SASS a row-thread of 32 -> 64 elements, 23.5 -> 21.4 an element; the
// same bytes in flight an SM).
void choose_norm_quantize_shape(NormQuantizeProblem& p, const runtime::Device& device);

}  // namespace warpforge::ops
