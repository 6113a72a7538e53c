// The sm_90a GEMM kernel, a design of the warp-specialized template
// (tile/warp_specialized.hpp): TMA loads into a multi-stage mbarrier
// pipeline, wgmma with accumulators in registers, warp specialization (one
// producer warpgroup that gives registers away with setmaxnreg, 1 or 2
// consumer warpgroups of 64 rows each), a persistent grid walking output
// tiles in grouped order for L2 reuse, optional 2-CTA clusters whose CTAs
// share the A or B tile through TMA multicast, and a TMA-store epilogue
// through swizzled shared memory. Edge tiles are TMA's bounds handling:
// loads zero-fill, stores clip.
//
// With stream_k, the last units are split along K between CTAs, whose
// partial sums meet in a workspace (sm90a_workspace_bytes; the template's
// StreamKReduction), so that the last wave does not leave SMs idle.
//
// With amax, the epilogue also folds max |alpha·acc (+ beta·C)| over D's
// elements, before D's conversion, into an f32 in global memory (the sign-
// cleared bits by unsigned max, so a NaN stays on top): per thread, per
// warp (redux.sync), then one red.global.max per warp.
//
// Kernel parameters, in order: map_a, map_b, map_d (128-byte tensor maps,
// grid constants), [C, c_row_stride, c_col_stride, c_batch_stride (elements)
// when has_c], [D, d_row_stride, d_batch_stride (elements) when the tile has
// tail columns, sm90a_tail_cols], M, N, K, L (u32), alpha, [beta] (f32),
// [amax (u64) when amax], [workspace (u64) when stream_k].
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gemm_problem.hpp"
#include "warpforge/layout/swizzle.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/runtime/dtype.hpp"
#include "warpforge/tile/stream_k_reduction.hpp"

namespace warpforge::ops {

struct GemmConfig;

// Columns of the boxes an MN-major tile `cols` wide is loaded in (below).
inline int sm90a_mn_box_cols(int cols) { return cols % 64 == 0 ? 64 : 32; }

struct Sm90aSpec {
  runtime::DType ab = runtime::DType::bf16;
  runtime::DType d = runtime::DType::bf16;  // also C's dtype
  bool a_k_major = true;   // A row-major (M x K, K contiguous); else M contiguous
  bool b_k_major = true;   // B column-major (K x N, K contiguous); else N contiguous
  int consumers = 2;       // consumer warpgroups
  // Cooperative (false): the consumers share each tile, 64 rows each, so the
  // tile has 64 * consumers rows. Ping-pong (true, two consumers): each takes
  // every other tile whole, wg_rows (64 or 128) rows of it, and its epilogue
  // runs while the other's mainloop keeps the tensor cores busy.
  bool pingpong = false;
  int wg_rows = 64;
  int tile_m() const { return pingpong ? wg_rows : 64 * consumers; }
  // A multiple of 32 up to 256. The columns past the last whole TMA store
  // box (32 of a 16-bit D when tile_n is an odd multiple of 32) are stored
  // from registers.
  int tile_n = 256;
  // N-major B arrives in boxes of 64 K rows by b_box_cols() columns: 64 in
  // the 128-byte swizzle where tile_n is a multiple of 64, else 32 in the
  // 64-byte swizzle (wgmma reads an MN-major operand in atoms one swizzle
  // span wide, PTX ISA 9.7.15.5.1.2, so odd multiples of 32 need the
  // narrower atom).
  int b_box_cols() const { return sm90a_mn_box_cols(tile_n); }
  layout::SmemSwizzle b_swizzle() const {
    return b_k_major || b_box_cols() == 64 ? layout::SmemSwizzle::b128 : layout::SmemSwizzle::b64;
  }
  // Columns of D per epilogue chunk (0: the whole tile_n): the epilogue's
  // shared buffer holds one chunk, so narrower chunks leave room for another
  // pipeline stage; a chunk waits for the last one's store to read it.
  int epilogue_cols = 0;
  int epilogue_width() const { return epilogue_cols ? epilogue_cols : tile_n; }
  int stages = 4;
  // CTAs per cluster along M (they share, and multicast, the B tile) and
  // along N (the A tile); cluster_m * cluster_n is 1 or 2.
  int cluster_m = 1, cluster_n = 1;
  int cluster_size() const { return cluster_m * cluster_n; }
  // Stream-K (cooperative, no cluster): the units past the last whole wave
  // (and one wave more when that remainder is under half a wave) are shared
  // out among the CTAs as equal runs of k-blocks.
  bool stream_k = false;
  // Rows of A that TMA loads per tile (0: the whole tile_m). A problem of
  // fewer rows than a tile (decode, M <= 64) loads only its rows, rounded up
  // to a swizzle atom's 8: zero-filling the rest through TMA's bounds
  // handling costs time (an H100 ran M = 1 a third slower than M = 64 at
  // the same tile, docs/PERFORMANCE.md). The rows past it hold whatever
  // shared memory held; they only reach rows of D past M, which the store
  // clips. K-major A without a cluster along N only.
  int a_rows = 0;
  int a_load_rows() const { return a_rows ? a_rows : tile_m(); }
  bool has_c = false;
  bool amax = false;
  std::string name() const;  // the kernel's name, spelling out every choice
};

// K per pipeline stage: one 128-byte swizzled row of 16-bit elements.
constexpr int kSm90aTileK = 64;

// Byte offsets in dynamic shared memory from the 1024-aligned base.
struct Sm90aSmem {
  std::uint32_t a_stage, b_stage;  // bytes of one stage of A, of B
  std::uint32_t epilogue_per_consumer;
  std::uint32_t a, b, epilogue, full, empty;
  std::uint32_t bytes;  // to request at launch, with 1 KB of slack for the alignment
};
Sm90aSmem sm90a_smem(const Sm90aSpec& spec);
inline int sm90a_threads(const Sm90aSpec& spec) { return 128 * (spec.consumers + 1); }
// Elements of D per 128-byte row of the epilogue's swizzled boxes.
inline int sm90a_store_box_cols(const Sm90aSpec& spec) { return 128 / (runtime::bits(spec.d) / 8); }
// Columns of a tile past its last whole store box, stored from registers.
inline int sm90a_tail_cols(const Sm90aSpec& spec) { return spec.tile_n % sm90a_store_box_cols(spec); }

// The stream-K workspace for a grid of `ctas`: a tile of f32 sums and a
// u32 flag per CTA. The flags must be zero before the first launch; every
// launch leaves them zero.
inline std::size_t sm90a_workspace_bytes(const Sm90aSpec& spec, std::uint32_t ctas) {
  return tile::stream_k_workspace_bytes(static_cast<std::size_t>(spec.tile_m()) * spec.tile_n * 4, ctas);
}

// The kernel the sm90a path builds for a problem and configuration
// (sm90a_path.cpp), its epilogue in chunks where the whole tile's buffer
// would not leave the stages room within `smem_limit` bytes (0: no limit).
Sm90aSpec sm90a_spec(const GemmProblem& problem, const GemmConfig& config, std::size_t smem_limit);

// Throws OpsError where `spec` cannot be built (a_rows, N-major B's boxes
// in a cluster); build_sm90a_gemm checks.
void check_sm90a_spec(const Sm90aSpec& spec);

ptx::Module build_sm90a_gemm(const Sm90aSpec& spec);

}  // namespace warpforge::ops
