// The pre-pass of the block-scaled op's large-M path: one operand's codes
// times their scales, written as bf16 into a workspace, exactly (an FP8 or
// E2M1 code times an e8m0 or e4m3 scale is a bf16: block_codes.hpp), so that
// the bf16 GEMM that follows (src/ops/gemm/sm90a_kernel.hpp, with its amax
// epilogue) computes the block-scaled product with f32 accumulation.
//
// One thread converts 32 consecutive codes of one row (one scale block, or
// two of NVFP4's 16): 32 bytes of FP8 or 16 of E2M1 in 16-byte loads, the
// scale bytes from the 128x4 layout (scale_factor_layout.hpp), 64 bytes of
// bf16 out in 16-byte stores. Grid: x over a row's groups of 32 codes (128
// threads a CTA), y over rows (each CTA walks rows y, y + gridDim.y, ...), z
// over batches. The output is row-major (rows, K') per batch, K' = K rounded
// up to 32; codes past K within the last group land in [K, K'), which the
// GEMM's tensor maps (extent K) never read. K-major codes only (the path
// refuses others); shapes and strides are compiled in.
//
// Parameters: codes, scales, out (u64 global addresses).
#pragma once

#include <cstdint>

#include "gemm_amax_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

enum class BlockScaledOperand { a, b };

inline constexpr int kDequantizeCodes = 32;    // codes per thread
inline constexpr int kDequantizeThreads = 128;  // threads per CTA

// K' of the output rows (elements).
inline std::int64_t dequantized_row(const GemmAmaxProblem& p) {
  return (p.k + kDequantizeCodes - 1) / kDequantizeCodes * kDequantizeCodes;
}
// Bytes of one operand's bf16 copy: rows x K' x L, 2 bytes each.
inline std::int64_t dequantized_bytes(const GemmAmaxProblem& p, BlockScaledOperand which) {
  return (which == BlockScaledOperand::a ? p.m : p.n) * dequantized_row(p) * p.l * 2;
}

ptx::Module build_dequantize_kernel(const GemmAmaxProblem& problem, BlockScaledOperand which);
std::string dequantize_kernel_name(BlockScaledOperand which);

}  // namespace warpforge::ops
