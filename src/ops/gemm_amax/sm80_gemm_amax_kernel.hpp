// The sm_80 block-scaled GEMM + amax kernel: correct first, and runnable on the
// simulator and on every GPU from sm_80 up.
//
// One CTA computes a tile_m × tile_n tile of C for one batch with
// (tile_m/32)·(tile_n/32) warps, each owning 32×32. Per step of 32 along K it
//  1. loads the A and B bytes of the step (one row per warp, lanes along K),
//     decodes each code and its block scale through two 256-entry f32 tables
//     in shared memory (the host's ops::decode, so NaN, inf and subnormals
//     are the formats' own), multiplies them (exact: an FP8 or E2M1 value
//     times a power of two or an E4M3 scale has at most 6 significant bits)
//     and stores the product as bf16 (exact for the same reason, short of
//     bf16 underflow below 2^-133 or overflow) into shared memory; elements
//     past M, N or K become 0;
//  2. runs mma.sync m16n8k16 bf16 -> f32 (tile::warp::gemm) on ldmatrix'd fragments.
// The epilogue converts C (cvt.rn for f16/bf16, emit_minifloat_encode for
// FP8/FP4, two FP4 values per byte) and reduces |C| — as the u32 bits of the
// sign-cleared float, whose unsigned order is the order of the values, a
// positive NaN above +inf — per thread (max.u32), per warp (redux.sync.max.u32),
// per CTA (atom.shared.max.u32), then one red.global.max.u32 per CTA.
//
// Parameters: A, B, SFA, SFB, C, amax (f32), tables (512 f32: data codes,
// then scale codes). Shapes and strides are compiled in.
#pragma once

#include <vector>

#include "gemm_amax_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

inline constexpr const char* kSm80GemmAmaxKernel = "gemm_amax_sm80";
inline constexpr int kSm80GemmAmaxBlockK = 32;

ptx::Module build_sm80_gemm_amax(const GemmAmaxProblem& problem, GemmAmaxTile tile);

// The 512-entry decode table the kernel reads (data codes, then scale codes).
std::vector<float> sm80_gemm_amax_tables(const GemmAmaxProblem& problem);

}  // namespace warpforge::ops
