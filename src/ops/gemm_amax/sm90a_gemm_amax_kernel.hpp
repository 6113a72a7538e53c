// The sm_90a block-scaled GEMM + amax kernel: the bf16 sm90a GEMM's wgmma
// mainloop (src/ops/gemm/sm90a_kernel.hpp) fed by in-kernel dequantization,
// in three designs on the warp-specialized template (one file each:
// sm90a_gemm_amax_converting.cpp, sm90a_gemm_amax_dequantized.cpp,
// sm90a_gemm_amax_fp8_mma.cpp; what they share: sm90a_gemm_amax_design.hpp).
//
// Hopper has no block-scaled tensor-core datapath, but an FP8 value times an
// e8m0 scale, or an E2M1 value times an e8m0 or e4m3 scale, is exact in bf16
// (REFERENCE.md; FP8 products below 2^-133 round), so bf16 wgmma on
// dequantized operands computes the block-scaled product. The codes take
// integer bit moves (prmt, multiply, mask: the code in a bf16's fields) and
// one exact mul.bf16x2 by the scale times the format's bias, built from the
// scale byte by a multiply-add where it fits in bf16 (else two multiplies,
// or for FP8 NaN/inf codes an exact cvt). One CTA walks the output tiles
// (128 x tile_n) persistently, or with split-K (tiling.splits) the tiles' K
// ranges. Warpgroup 2 brings the raw data: one thread TMA-loads the raw
// bytes of A (128 rows x one K block of codes) and B (tile_n rows), and the
// 512-byte pieces of SFA and SFB that hold those rows' scales, into
// `raw_stages` stages (A's rows then B's; SFA's piece then SFB's). Then one
// of three schemes:
//
// Converting warpgroups (dequant_warpgroups 0, not fp8_mma: MXFP8, MXFP4,
// NVFP4 at 128 x 256, 384 threads): all three warpgroups convert each raw
// stage, A's 128 rows and B's 256, to bf16 in one of three bf16 stages laid
// out as TMA's 128-byte swizzle would (16-byte chunk c of row r at chunk
// c ^ (r % 8)); warpgroups 0 and 1 run wgmma m64n256k16 with both operands
// from the previous stage meanwhile. One barrier (barrier.sync) per K block
// orders the stores before any wgmma reads them, and frees the raw stage:
// warpgroup 2's first thread then loads the next one (no empty barriers).
// In a 2-CTA cluster (cluster_m 2) each CTA loads and converts only half of
// B's rows; after the barrier the copy engine sends them into the partner's
// bf16 stage (cp.async.bulk), completing on the partner's `peer_full`
// mbarrier, which its warpgroup 2 waits for before its next barrier.
// A CTA this small is what lets ptxas give the m64n256 accumulators their
// registers (it compiles every thread within 65536 / threads, whatever
// setmaxnreg grants later).
//
// E2M1 with dequantizer warpgroups (128 x 128, 128 x 64): warpgroups 3 (and
// 4) convert each raw stage's B into `stages` bf16 stages, each row's 64
// codes in the order of the consumers' A fragments; the consumers
// (warpgroups 0 and 1, 64 rows each) dequantize their rows' 16 consecutive
// codes of A per K block straight into wgmma's register-A fragments, then
// wgmma with B from the bf16 stages; K is permuted alike in both operands,
// which leaves the sum unchanged. setmaxnreg moves the producer's and the
// dequantizers' registers to the consumers.
//
// MXFP8 with fp8_mma (128 x 128, 128 x 64) skips the dequantizer: the raw
// stages hold 128 codes of K in the 128-byte swizzle, the consumers' FP8
// wgmma read them, and each 32-code scale block's partial sum is scaled and
// added in f32; the producer warpgroup's warps 1-3 turn each stage's scale
// pieces into f32 (barrier `ready`), and the consumers free raw stages
// themselves.
//
// The epilogue stores C (f32, bf16 or f16) with st.global and folds max
// |acc| (the sign-cleared bits, unsigned max: a NaN stays on top) per
// thread, per warp (redux.sync), per CTA (a shared atomic), then one
// red.global.max.u32 per CTA.
// Barriers: raw full (TMA transaction bytes) / raw empty (every dequantizing
// thread, or the fp8_mma consumers), and with dequantizer warpgroups bf16
// full (every dequantizer thread, after fence.proxy.async) / bf16 empty (one
// arrival per consumer warpgroup); in a cluster, peer_full per bf16 stage
// (one arrival arming it for the partner's bytes, the copy's transaction).
// Out-of-range rows and K are TMA's zero fill; scales past K are taken as
// 0 (the layout's padding may hold NaN), those of rows past M or N as they
// are (their sums are neither stored nor counted in amax).
//
// Parameters: map_a, map_b (u8 tensor maps of the raw bytes), map_sfa,
// map_sfb (u8 tensor maps of the scale bytes as 256-byte rows; grid
// constants, all four), C, amax, [workspace (u64) with split-K]. Shapes and
// strides are compiled in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemm_amax_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

inline constexpr int kSm90aGemmAmaxTileM = 128;
inline constexpr int kSm90aGemmAmaxTileK = 64;  // one 128-byte swizzled row of bf16
// Bytes of the 128x4 scale layout holding 128 rows x 4 scale blocks: what
// each raw stage carries per operand.
inline constexpr std::uint32_t kScalePiece = 512;

// Tiles 128 x tile_n. An m64n256 accumulator's wgmma needs 158 registers
// per thread, and ptxas compiles every thread of the CTA within 65536 /
// threads (rounded down to 8: 168 for 384 threads, 128 for 512) whatever
// setmaxnreg later grants ("Insufficient registers (128) to compile
// instruction"): 128 x 256 tiles only with the converting warpgroups.
struct Sm90aGemmAmaxTiling {
  int tile_n = 256;
  // bf16 stages: tile_n-row B stages with dequantizer warpgroups (16 KB each
  // at 128 columns), (128 + tile_n)-row A and B stages with converting
  // warpgroups (exactly 3: see mainloop_converting in sm90a_gemm_amax_converting.cpp).
  int stages = 3;
  int raw_stages = 4;  // raw stages: A's and B's codes and scale pieces
  // Dequantizer warpgroups: 0, three converting warpgroups convert both
  // operands (tile_n 256, any format without fp8_mma); 1 or 2 (E2M1, tile_n
  // 64 or 128), they convert B, the consumers A.
  int dequant_warpgroups = 0;
  // MXFP8 (e4m3/e5m2 codes, e8m0 scales per 32) without dequantizing: the
  // raw stages hold 128 codes of K in TMA's 128-byte swizzle, each scale
  // block is one FP8 wgmma m64nNk32 into a partial sum, and the consumers
  // add partial x (scale of A's row x scale of B's column) to the
  // accumulator (f32 FMA). The producer warpgroup's other three warps turn
  // each stage's scale pieces into f32 for them. No bf16 stages, no
  // dequantizer warpgroups; tile_n 64 or 128.
  bool fp8_mma = false;
  // Split-K: each output tile's K blocks in this many ranges on as many
  // CTAs (finish_tile in sm90a_gemm_amax_kernel.cpp). For shapes with fewer than half as many
  // tiles as SMs (the decode shape M = 128): every CTA converts a fraction of the codes.
  int splits = 1;
  // Converting warpgroups only: 2 runs M-neighbouring tiles (the same B
  // columns) as a 2-CTA cluster. Each CTA loads and converts A's 128 rows
  // and half of B's 256 into its own bf16 stage, and the copy engine sends
  // those B rows into its partner's (cp.async.bulk.shared::cluster): a
  // third fewer conversions per MAC.
  int cluster_m = 1;
};
// B's rows a CTA loads and converts: tile_n, or half of it in a cluster.
inline int sm90a_gemm_amax_b_rows(const Sm90aGemmAmaxTiling& t) { return t.tile_n / t.cluster_m; }
// Scale pieces (128 rows each) a raw stage carries for those rows.
inline int sm90a_gemm_amax_sfb_pieces(const Sm90aGemmAmaxTiling& t) {
  const int rows = sm90a_gemm_amax_b_rows(t);
  return rows > 128 ? rows / 128 : 1;
}
// Codes of K per raw stage: 128 (one swizzled row of FP8) with fp8_mma, else 64.
inline int sm90a_gemm_amax_codes(const Sm90aGemmAmaxTiling& t) { return t.fp8_mma ? 128 : kSm90aGemmAmaxTileK; }
// Bytes of one row of a raw stage as TMA loads it: FP4 packs two per byte.
inline std::uint32_t sm90a_gemm_amax_raw_row_bytes(runtime::DType ab, const Sm90aGemmAmaxTiling& t) {
  const int codes = sm90a_gemm_amax_codes(t);
  return static_cast<std::uint32_t>(ab == runtime::DType::e2m1 ? codes / 2 : codes);
}
inline int sm90a_gemm_amax_threads(const Sm90aGemmAmaxTiling& t) {
  return 128 * (3 + (t.fp8_mma ? 0 : t.dequant_warpgroups));
}

// Split-K's workspace (tile/split_k_reduction.hpp): per output tile, split
// after the first and consumer warpgroup, a slot of its 64 x tile_n f32
// sums, then a u32 flag each. The flags must be zero before the first
// launch; every launch leaves them so.
inline std::uint32_t sm90a_gemm_amax_partial_bytes(const Sm90aGemmAmaxTiling& t) {
  return 64 * static_cast<std::uint32_t>(t.tile_n) * 4;
}
std::size_t sm90a_gemm_amax_workspace_bytes(const GemmAmaxProblem& problem, const Sm90aGemmAmaxTiling& tiling);

// Dynamic shared memory to request (the design's layout, with 1 KB of
// slack for the base's alignment).
std::uint32_t sm90a_gemm_amax_smem_bytes(runtime::DType ab, const Sm90aGemmAmaxTiling& tiling);

std::string sm90a_gemm_amax_name(const GemmAmaxProblem& problem, const Sm90aGemmAmaxTiling& tiling);

// One design's own account of what it takes (each design's file gives its
// own), which the sm90a path's selection gathers (sm90a_gemm_amax_tiling,
// its refusals and describe()'s words).
struct Sm90aGemmAmaxDesign {
  std::string_view scheme;  // describe()'s words for it
  std::vector<int> widths;  // the tile_n it runs, widest first
  bool splits = false;      // K in ranges (split-K) where tiles are few
  bool pairs = false;       // 2-CTA clusters along M
  // Why it does not run the problem's data at its precision; nullopt where it does.
  std::optional<std::string> (*refuses)(const GemmAmaxProblem& problem) = nullptr;
  // Its tiling at tile width `tile_n` (stages, warpgroups, cluster; the
  // selection sets the splits).
  Sm90aGemmAmaxTiling (*tiling)(const GemmAmaxProblem& problem, int tile_n) = nullptr;
};
// The designs, in the selection's order of preference.
const std::vector<const Sm90aGemmAmaxDesign*>& sm90a_gemm_amax_designs();

ptx::Module build_sm90a_gemm_amax(const GemmAmaxProblem& problem, const Sm90aGemmAmaxTiling& tiling);

}  // namespace warpforge::ops
