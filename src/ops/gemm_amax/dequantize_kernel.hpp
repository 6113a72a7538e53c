// The pre-pass of the block-scaled op's large-M path: one operand's codes
// times their scales, written as bf16 into a workspace, exactly (an FP8 or
// E2M1 code times an e8m0 or e4m3 scale is a bf16: block_codes.hpp), so that
// the bf16 GEMM that follows (src/ops/gemm/sm90a_kernel.hpp, with its amax
// epilogue) computes the block-scaled product with f32 accumulation.
//
// DequantizedOrder::k (the prepass path's A and B): a thread converts
// kDequantizePieces pieces of 8 codes of one row, 32 pieces apart within
// its warp, so that every warp-wide load reads 256 contiguous bytes of FP8
// (128 of E2M1) and every store writes 512 contiguous bytes of bf16, all
// of its loads (and their scale bytes, from the 128x4 layout:
// scale_factor_layout.hpp) issued before the first conversion. Grid: x
// over a row's pieces (128 threads a CTA), y over rows (each CTA walks
// rows y, y + gridDim.y, ...), z over batches. The output is row-major
// (rows, K') per batch, K' = K rounded up to 32; codes past K within the
// last piece land in [K, K'), which the GEMM's tensor maps (extent K) never
// read. K-major codes only (the paths refuse others); shapes and strides
// are compiled in.
//
// DequantizedOrder::nibble_pairs (the stream kernel's A against GemmAmax's
// FP4 B, packed_weight_stream.hpp): K order but inside each 8 values, which
// sit as BlockCodes::dequant_fp4 pairs FP4 codes: value i + 4h at 2i + h
// (i < 4). For FP8 data it is K order.
//
// DequantizedOrder::fragments (the swapped kernel's A, K a multiple of 64):
// a thread converts 32 consecutive codes (one scale block, or two of
// NVFP4's 16) in 16-byte loads; inside each 64-code block the values sit where that kernel's register
// fragments of B put the codes they multiply (swapped_gemm_amax_kernel.hpp):
// of codes 16t .. 16t + 15 of the block, the value that BlockCodes'
// conversion (dequant_fp8, dequant_fp4) puts in half h of its pair q goes
// to position 16(q / 2) + 2t + 8(q % 2) + h. A permutation
// of K applied to both operands leaves every product, and so the sum's
// exactness, as it was.
//
// Parameters: codes, scales, out (u64 global addresses).
#pragma once

#include <cstdint>

#include "gemm_amax_problem.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

enum class BlockScaledOperand { a, b };
enum class DequantizedOrder { k, nibble_pairs, fragments };

inline constexpr int kDequantizeCodes = 32;    // codes per thread (fragment order)
inline constexpr int kDequantizePieces = 4;    // pieces of 8 codes per thread (K order)
inline constexpr int kDequantizeThreads = 128;  // threads per CTA
// Registers a thread where the pre-pass starts its dependents at once
// (DependentsStart::at_start): one CTA fits beside two of the swapped kernel's.
inline constexpr int kDequantizeBesideRegisters = 32;

// K' of the output rows (elements).
inline std::int64_t dequantized_row(const GemmAmaxProblem& p) {
  return (p.k + kDequantizeCodes - 1) / kDequantizeCodes * kDequantizeCodes;
}
// Bytes of one operand's bf16 copy: rows x K' x L, 2 bytes each.
inline std::int64_t dequantized_bytes(const GemmAmaxProblem& p, BlockScaledOperand which) {
  return (which == BlockScaledOperand::a ? p.m : p.n) * dequantized_row(p) * p.l * 2;
}

// When the stream's next grid, launched with overlap_previous, may start:
// as this one starts (at_start: a dependent with work of its own before it
// reads this output, the swapped kernel streaming B), or as this one's CTAs
// finish (at_exit: a persistent dependent, the prepass path's bf16 GEMM,
// whose early CTAs would hold the SMs this grid still needs: started with
// it, 8192^3 MXFP8 ran 0.93x cuBLAS bf16 where it had run 0.98x, measured
// on an H100, docs/PERFORMANCE.md).
enum class DependentsStart { at_start, at_exit };

ptx::Module build_dequantize_kernel(const GemmAmaxProblem& problem, BlockScaledOperand which,
                                   DequantizedOrder order = DequantizedOrder::k,
                                   DependentsStart dependents = DependentsStart::at_exit);
std::string dequantize_kernel_name(BlockScaledOperand which);

// Launches a pre-pass built by build_dequantize_kernel on `module`: the
// operand's codes and scales into the bf16 copy at `out` (dequantized_bytes).
void launch_dequantize(runtime::Module& module, const GemmAmaxProblem& problem, BlockScaledOperand which,
                       DequantizedOrder order, const runtime::TensorView& codes, const runtime::TensorView& scales,
                       runtime::DevicePtr out, runtime::Stream* stream);

}  // namespace warpforge::ops
