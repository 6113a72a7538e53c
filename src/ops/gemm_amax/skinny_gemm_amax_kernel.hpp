// The skinny block-scaled GEMM + amax kernel: small M (decode), where a GEMM
// is bound by reading B once, so B's codes must stream at the memory's rate
// and be read once.
//
// A and B swap roles: the kernel computes Cᵀ = B·Aᵀ with mma.sync
// m16n8k16 (bf16 in, f32 accumulate), B's rows filling the 16-row side and
// M's tokens the 8-wide side. Each warp owns `row_tiles` 16-row tiles of
// B's rows (N) over the CTA's K range; its lanes load B's codes straight
// from global memory into registers, 32 codes per lane and row (one chunk:
// 128 codes of a row over the 4 lanes of an mma row group, 128 bytes of
// FP8 or 64 of E2M1), `prefetch` chunks ahead, and convert them into the
// mma's A fragments (BlockCodes: exact). K is permuted inside each chunk
// alike for both operands (which leaves the sum as exact as any order of
// f32 additions): lane t (of 4) of a row group holds the chunk's codes
// [32t, 32t + 32), one scale block (two at vec 16), and k16 step j takes
// its converted pairs 2j and 2j + 1 as the fragment's columns {2t, 2t + 1}
// and {2t + 8, 2t + 9}.
// A (M ≤ 128 tokens, read by every CTA) is converted once per CTA and chunk
// by the CTA's threads into a shared-memory stage in exactly that order,
// step-major ([step][token][lane t] x 8 bytes, so the fragment loads of a
// step are conflict-free), two stages deep: each chunk's A is converted
// while the previous chunk's mma run, one barrier per chunk.
//
// K is split over `splits` CTAs (grid y) so that every SM streams: each
// writes its partial sums to the workspace, and the last CTA of an output
// tile to arrive (an atomic counter, behind gpu-scope fences) adds the
// partials in split order — deterministic, whichever arrives last — stores
// C, folds amax, and clears the counter for the next launch (so a launch
// leaves the workspace as it found it: CUDA graphs replay it).
//
// Takes k-major A and B with 16-byte aligned rows, K a multiple of the
// chunk (128), M ≤ 128, C f32, bf16 or f16 (skinny_gemm_amax_path refuses the
// rest, which other kernels run). Target sm_90a: the exact conversions
// multiply bf16x2 (mul.bf16x2, sm_90 and up, PTX ISA 9.7.4.2); the
// simulator runs it.
//
// Not a design of the warp-specialized template (tile/warp_specialized.hpp):
// it has no roles to specialize. Every warp streams its own B rows from
// global memory straight into registers (prefetch chunks ahead) and
// multiplies them with mma.sync; nothing passes B through shared memory,
// which is what a producer warpgroup and an mbarrier ring would add (a
// round trip per byte of the operand that bounds decode), and A's small
// stage is written and read by all warps around one barrier per chunk. Its
// grid is one CTA per B row block and K range, not persistent. Its split-K
// reduction is transposed_output's, which the swapped kernel (a design)
// shares.
//
// Parameters: A, B, SFA, SFB, C, amax (f32), workspace (partials, then one
// u32 counter per output tile; only with splits > 1). Shapes and strides
// are compiled in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gemm_amax_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

inline constexpr const char* kSkinnyGemmAmaxKernel = "gemm_amax_skinny";
inline constexpr std::int64_t kSkinnyGemmAmaxMaxM = 128;

struct SkinnyGemmAmaxTiling {
  int warps = 4;      // per CTA
  int row_tiles = 2;  // 16-row tiles of B per warp
  int splits = 1;     // CTAs along K per output tile
  int prefetch = 2;   // chunks of B in flight per lane beyond the one converted
  friend bool operator==(const SkinnyGemmAmaxTiling&, const SkinnyGemmAmaxTiling&) = default;
};

// Codes of one chunk of a row: 4 lanes x 32 codes. (16 FP8 codes a lane,
// measured on an H100, spent about 240 of a chunk's 417 instructions a warp
// on work per chunk rather than per code: docs/PERFORMANCE.md.)
inline std::int64_t skinny_gemm_amax_chunk_codes(const GemmAmaxProblem&) { return 128; }
// B's rows one CTA covers, and the grid: (row tiles, splits, L).
inline std::int64_t skinny_gemm_amax_cta_rows(const SkinnyGemmAmaxTiling& t) { return 16 * t.warps * t.row_tiles; }
// Tokens the CTA computes: M rounded up to the mma's 8.
inline int skinny_gemm_amax_tokens(const GemmAmaxProblem& p) { return static_cast<int>((p.m + 7) / 8 * 8); }
// Workspace bytes (0 without a split): partial sums and counters.
std::size_t skinny_gemm_amax_workspace_bytes(const GemmAmaxProblem& p, const SkinnyGemmAmaxTiling& t);
// Where the counters start in the workspace.
std::size_t skinny_gemm_amax_counter_offset(const GemmAmaxProblem& p, const SkinnyGemmAmaxTiling& t);

// Throws OpsError for a tiling it cannot build (the path checks the problem).
ptx::Module build_skinny_gemm_amax(const GemmAmaxProblem& problem, const SkinnyGemmAmaxTiling& tiling);

}  // namespace warpforge::ops
