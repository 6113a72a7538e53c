// The swapped block-scaled GEMM + amax kernel (sm_90a): M from a few dozen
// to about a thousand tokens, where B (the weights, N x K) is the bulk of
// the bytes and the tensor cores' bf16 rate is within reach.
//
// A and B swap roles, as in the skinny kernel: the kernel computes Cᵀ = B·Aᵀ
// with wgmma m64nTk16 (bf16, f32 accumulate), B's rows on wgmma's 64-row
// side taken from registers (the RS form) and A's tokens, T of them, on its
// N side from shared memory. B's codes are converted once, by the threads
// that multiply them: each consumer thread loads its two rows' 16 codes of
// each 64-code K block of the stage TMA filled (one 16-byte load each, 8
// bytes for E2M1; all the stage's blocks and scale bytes at once, checked
// once for the fast conversion) and BlockCodes turns a block's exactly
// into the four k16 steps' register fragments while the previous block's
// wgmma run. The
// thread's pair q of row h goes to wgmma's K position 16(q / 2) + 2t + 8(q
// % 2) (t = lane % 4; PTX ISA 9.7.15.5.1.1, the A fragment of m64nNk16):
// K is permuted inside each 64-code block, and A comes already converted
// to bf16 by a pre-pass in that same order (DequantizedOrder::fragments,
// dequantize_kernel.hpp), which leaves every product exact and the sum an
// f32 sum like any other order's.
//
// A CTA is two consumer warpgroups (64 B rows each) and a producer
// warpgroup whose first thread TMA-loads each stage of `blocks` K blocks:
// A's bf16 tiles (a block's T rows x 64 values in TMA's 128-byte swizzle,
// wgmma's K-major B operand), B's codes (128 rows x 64·blocks codes,
// swizzled where a row's piece is 128 bytes: swapped_gemm_amax_b_swizzle)
// and the 512-byte pieces of SFB's 128x4 layout that hold those rows' scales. ptxas budgets a 384-thread
// CTA at 168 registers a thread, too few for 256 tokens' accumulators, so
// the producer warpgroup gives registers back with setmaxnreg and the
// consumers take 232 (thread 0 loading between its own blocks instead ran
// 13-17% slower on an H100: docs/PERFORMANCE.md). One CTA per output tile of 128 B rows x T tokens and
// K range (split-K in fixed split order, through the cluster's shared
// memory or a workspace: transposed_output.hpp); C stored transposed and
// amax folded there too.
//
// Takes K a multiple of 64 (the permutation's block) and k-major B with
// 16-byte aligned rows (swapped_gemm_amax_path refuses the rest).
//
// Parameters: map_a (bf16 A in fragment order), map_b (B's codes as u8),
// map_sfb (SFB's bytes as 256-byte rows; the three as grid constants), C,
// amax, [workspace (u64) with split-K]. Shapes and strides are compiled in.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gemm_amax_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

inline constexpr const char* kSwappedGemmAmaxKernel = "gemm_amax_swapped";
inline constexpr int kSwappedRows = 128;   // B rows per CTA: two consumer warpgroups of 64
inline constexpr int kSwappedBlock = 64;   // codes of K per stage: one 128-byte row of bf16
inline constexpr int kSwappedMaxTokens = 256;  // wgmma's widest N

struct SwappedGemmAmaxTiling {
  int tokens = 128;  // T: wgmma's N, a multiple of 8 up to 256
  int stages = 6;
  // K blocks (of kSwappedBlock codes) a stage: 1, 2 or 4. More make each
  // B row's piece of a stage longer (64 FP8 codes are 64 bytes, 64 E2M1
  // codes 32) and a stage's TMA requests fewer a byte.
  int blocks = 1;
  int splits = 1;    // CTAs along K per output tile
  // With splits > 1: the splits of a tile form a cluster (up to 8) and add
  // their partial sums through its shared memory; else through the workspace.
  bool cluster = false;
  // CTAs an SM, 1 or 2: two give each scheduler four consumer warps where
  // one gives it two (the conversion's dependent chains hide each other's
  // latency), at 104 registers a consumer thread and half the shared memory.
  int ctas_per_sm = 1;
  friend bool operator==(const SwappedGemmAmaxTiling&, const SwappedGemmAmaxTiling&) = default;
};

// K blocks a split: ceil(K blocks / splits), rounded up to a stage's
// blocks (a split's stages never straddle two splits).
std::int64_t swapped_gemm_amax_split_blocks(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t);
// The TMA swizzle of a stage's B codes, as the bytes of its span: 128
// where a B row's piece of a stage is 128 bytes (several K blocks), so that
// the 8 rows a warp reads at once lie in different banks (unswizzled, rows
// 128 bytes apart share theirs); 0 (none) else.
std::uint32_t swapped_gemm_amax_b_swizzle(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t);
// Output tiles (B row tiles x token tiles x L) and the grid (tiles x splits).
std::int64_t swapped_gemm_amax_tiles(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t);
// Threads a CTA: two consumer warpgroups and the producer warpgroup.
int swapped_gemm_amax_threads();
// Dynamic shared memory to request (with 1 KB of slack for the alignment).
std::uint32_t swapped_gemm_amax_smem_bytes(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t);
// Split-K's workspace (0 without, or with the splits in a cluster): partial
// sums, then a u32 counter per tile.
std::size_t swapped_gemm_amax_split_bytes(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t);

// Throws OpsError for a tiling or problem it cannot build.
ptx::Module build_swapped_gemm_amax(const GemmAmaxProblem& problem, const SwappedGemmAmaxTiling& tiling);

}  // namespace warpforge::ops
