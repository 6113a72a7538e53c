// The sm_100a bf16/f16 GEMM kernel (experimental: built from the PTX ISA's
// text and run on the simulator only; no Blackwell GPU has run it).
//
// One CTA of 128 threads (4 warps) computes a 128 x 128 tile of D for one
// batch, with the f32 accumulator in tensor memory (128 lanes x 128
// columns), its warps specialized:
//  - thread 0 (the producer) loads the A and B tiles of each 64-element
//    k-block with TMA into a ring of `stages` slots of 128-byte-swizzled
//    shared memory (tile::MbarrierPipeline: a full barrier counting TMA's
//    bytes, an empty barrier per slot);
//  - thread 32 (the MMA issuer) waits for each slot, issues its four
//    tcgen05.mma.cta_group::1.kind::f16 (M = 128, N = 128, K = 16) and
//    frees the slot with tcgen05.commit on its empty barrier, which arrives
//    once those MMAs have read it; after the last k-block it commits to the
//    accumulator barrier;
//  - all four warps (the epilogue) wait for the accumulator, read it with
//    tcgen05.ld.32x32b (warp w: lanes, i.e. rows, 32w..32w+31; 32 columns at
//    a time), and write D = alpha·acc (+ beta·C) converted to D's type,
//    element by element, skipping what lies past M or N.
// A and B may each be K-major or MN-major (the instruction descriptor's
// transpose bits). Edge tiles are TMA's bounds handling: loads past M, N or
// K are zero-filled.
//
// With `pair`, clusters of two CTAs (ranks 0 and 1 along grid.x) compute a
// 256 x 128 tile with .cta_group::2 (PTX ISA 9.7.16.5; M = 256, data-path
// layout A): each CTA loads its 128 rows of A and its 64 of B's 128 columns
// into its own ring; the odd CTA's thread 32 relays each full slot to the
// even CTA's full barrier (mapa + mbarrier.arrive.shared::cluster), whose
// thread 32 alone issues the MMAs, reading both CTAs' slots, and frees both
// CTAs' slots and completes both accumulators with tcgen05.commit
// .multicast::cluster; each CTA's epilogue reads its 128 rows from its own
// tensor memory. Allocation is the pair's (warp 0 of each CTA).
//
// Parameters: map_a, map_b (128-byte tensor maps, grid constants; B's box is
// 64 rows of N with `pair`, 128 without), D,
// d_row_stride, d_col_stride, d_batch_stride (u64, elements), [C,
// c_row_stride, c_col_stride, c_batch_stride when has_c], M, N, K (u32),
// alpha, [beta] (f32). Grid: (tiles along M, tiles along N, L).
#pragma once

#include <cstdint>
#include <string>

#include "warpforge/ptx/module.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

struct Sm100aSpec {
  runtime::DType ab = runtime::DType::bf16;  // A and B: bf16 or f16
  runtime::DType d = runtime::DType::f32;    // C and D: f32, bf16 or f16
  bool a_k_major = true;                     // A row-major (M x K, K contiguous); else M contiguous
  bool b_k_major = true;  // B column-major (K x N, K contiguous); else N contiguous
  int stages = 4;
  bool has_c = false;
  bool pair = false;         // .cta_group::2 over clusters of two CTAs (grid.x even)
  std::string name() const;  // the kernel's name, spelling out every choice
};

// The tile of one CTA: M = 128 (the tensor-memory lanes of one cta_group::1
// MMA, or of one CTA's half of a pair's M = 256), N = 128, K = 64 per stage
// (one 128-byte swizzled row of 16-bit elements).
inline constexpr int kSm100aTileM = 128, kSm100aTileN = 128, kSm100aTileK = 64;
inline constexpr int kSm100aThreads = 128;

// Dynamic shared memory to request at launch: the stages' A and B tiles
// (16 KiB each), the barriers, and 1 KiB of slack to align the tiles to 1024.
std::uint32_t sm100a_shared_bytes(const Sm100aSpec& spec);

ptx::Module build_sm100a_gemm(const Sm100aSpec& spec);

}  // namespace warpforge::ops
