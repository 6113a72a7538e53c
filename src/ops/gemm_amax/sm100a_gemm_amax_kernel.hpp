// The sm_100a block-scaled GEMM + amax kernel (experimental: built from the
// PTX ISA's text and run on the simulator only; no Blackwell GPU has run it).
//
// One CTA of 128 threads computes a 128 x 128 tile of C for one batch, with
// the accumulator in tensor memory, one step per scale group along K (4
// scale blocks: 128 codes for MXFP8 and MXFP4, 64 for NVFP4), in one of two
// ways.
//
// Pipelined (stages >= 1; k-major A and B whose rows are 16-byte multiples):
// warp-specialized. Thread 0 loads each step's codes of A and B (a box of
// 128 rows by the step's bytes, swizzled with a span of that width) and
// both 512-byte scale groups with TMA into a ring of `stages` slots
// (tile::MbarrierPipeline); thread 32 copies a slot's scale groups into
// that slot's tensor-memory columns with tcgen05.cp.32x128b.warpx4, issues
// the step's block-scaled MMAs and frees the slot with tcgen05.commit on its
// empty barrier; all four warps then run the epilogue below.
//
// Staged (stages = 0; any strides): per step it
//  1. stages the step's A and B codes into shared memory in the canonical
//     K-major layout without swizzle (each thread one row of A and one of B;
//     codes past M, N or K become 0), and the two 512-byte scale groups (the
//     128x4 layout, scale_factor_layout.hpp), then fences them to the async
//     proxy;
//  2. one thread copies the scale groups into tensor memory with
//     tcgen05.cp.32x128b.warpx4 (which duplicates them over the four lane
//     quarters, as the block-scaled MMA requires), issues the step's
//     tcgen05.mma ... .block_scale (kind::mxf8f6f4 scale_vec::1X for MXFP8,
//     kind::mxf4 2X for MXFP4, kind::mxf4nvf4 4X for NVFP4, 32 bytes of K
//     each) and commits them to an mbarrier, which every thread waits on
//     before the next step reuses shared memory.
// Pipelined over CTA pairs (`pair`: clusters of two CTAs along grid.x, one
// 256 x 128 tile per pair, .cta_group::2 with M = 256; sm100a_pair.hpp):
// each CTA loads its 128 rows of A, its 64 of B's 128 rows, its scale group
// of A and the pair's scale group of B into its own ring; the odd CTA's
// thread 32 relays its full slots to the even CTA, whose thread 32 copies
// the scale groups with tcgen05.cp.cta_group::2 (into each CTA's tensor
// memory from its own slot), issues the MMAs and commits to both CTAs'
// barriers.
// The epilogue reads D with tcgen05.ld.32x32b (warp w: rows 32w..32w+31,
// one row per thread, 32 columns at a time), folds |C| into amax (per
// thread, warp, CTA, then one red.global.max per CTA, as the sm80 kernel
// does) and converts and stores C.
//
// Parameters: A, B, SFA, SFB (staged: pointers; pipelined: 128-byte tensor
// maps, grid constants: codes as u8 (K bytes, rows, L), scales as u8 rows of
// 256 bytes; B's code box is 64 rows in a pair, else 128), C, amax (f32).
// Shapes and strides are compiled in. Grid: (tiles along M, rounded up to
// even in a pair, tiles along N, L).
#pragma once

#include <cstdint>

#include "gemm_amax_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

inline constexpr const char* kSm100aGemmAmaxKernel = "gemm_amax_sm100a";
inline constexpr GemmAmaxTile kSm100aGemmAmaxTile{128, 128};

// `pair` needs stages >= 1.
ptx::Module build_sm100a_gemm_amax(const GemmAmaxProblem& problem, int stages = 0,
                                   bool pair = false);
// The dynamic shared memory the pipelined kernel asks for at launch (0 when staged).
std::uint32_t sm100a_gemm_amax_shared_bytes(const GemmAmaxProblem& problem, int stages);

}  // namespace warpforge::ops
