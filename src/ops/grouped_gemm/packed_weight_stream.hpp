// Streaming packed block-scaled weights (grouped_gemm.hpp, PackedWeightsLayout),
// or bf16 weights whose K is contiguous, into mma.sync m16n8k16 A
// fragments: the weight side of a decode kernel
// that computes Dᵀ = W·Xᵀ with the weights' rows on the mma's M side, the
// piece a block-scaled decode kernel needs whatever multiplies them (the
// grouped stream kernel here; GemmAmax's skinny kernel could read packed B
// the same way).
//
// Each warp streams `row_tiles` 16-row tiles of one group, chunk by chunk
// (256 codes of K). Lane l = 4q + t owns rows q and q + 8 of each tile and
// the chunk's codes [64t, 64t + 64) of them: the packed layout puts exactly
// these in the lane's 16-byte loads, each warp-wide load 512 contiguous
// bytes. The loads go by cp.async into a per-thread ring of shared-memory
// stages (PTX ISA 9.7.9.25: after cp.async.wait_group the issuing thread
// sees its own copies, so packed weights need no barrier; a kernel that
// shares other data through the same stages brings its own), laid out
// load-major, [row tile][load][thread] x 16 bytes, then the scales
// [row tile][thread] x S, so every warp-wide shared access is contiguous.
// bf16 weights are read where they lie, a warp-wide copy one row's 512
// bytes of the chunk, into a swizzled [warp][tile][row] layout (issue_bf16):
// a lane's fragments are then other lanes' copies, and the kernel's barrier
// after the wait must come before load(). Block-scaled weights as GemmAmax
// takes them (NativeWeights) land in the packed layout's places, each
// warp-wide copy 64 contiguous bytes of 8 rows (whole sectors) into other
// lanes' pieces (issue_native): the same barrier; the scales 4 bytes a row
// from the 128x4 layout. Their FP4 codes keep their nibble order, which
// BlockCodes::dequant_fp4 pairs as codes i and i + 4 of each 8: the other
// operand must hold its K so (the kernel's A, DequantizedOrder::nibble_pairs).
//
// A chunk read back (load) is converted 16 codes a lane at a time
// (fragments; bf16 needs none): FP4 two 32-bit words, FP8 four, into 8 bf16 pairs of each of
// the lane's rows, pair p holding codes 2p, 2p + 1 of the 16 (FP4 from the
// packed bit order, dequant_fp4; FP8 by BlockCodes) —
// which are k16 steps 4·group .. 4·group + 3 of the chunk: step s takes
// pairs 2s, 2s + 1 of rows q and q + 8 as {a0, a1, a2, a3} (PTX ISA
// 9.7.14.5.8: a0 row groupID columns 2t, 2t + 1, a1 row groupID + 8, a2
// and a3 columns + 8). So a lane's step covers the chunk's codes
// 64t + 4s .. 64t + 4s + 3 where the fragment has columns 2t, 2t + 1, 2t +
// 8, 2t + 9: the other operand must hold its K in that order (a
// permutation of K inside each chunk, applied to both, which leaves every
// product as it was). Conversions are exact (BlockCodes): one bf16x2
// multiply a pair where the chunk's scales fold with the codes' bias
// (foldable), else the exact slow way.
#pragma once

#include <vector>

#include "../gemm_amax/block_codes.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/ops/grouped_gemm.hpp"

namespace warpforge::ops {

// bf16 weights as they lie (K contiguous): element (g, k, n) of B at
// g·group_stride + n·row_stride + k elements.
struct Bf16Weights {
  std::int64_t groups = 1, k = 0, n = 0, row_stride = 0, group_stride = 0;
};

// Block-scaled weights as GemmAmax takes B (one group): (N, K) codes with K
// contiguous, rows `row_bytes` apart (16-byte aligned), FP4 two a byte with
// the lower k in the low nibble; the scales in the 128x4 layout over N
// (scale_factor_layout.hpp). K a multiple of 64: a lane's piece of a row
// (64 codes) lies wholly inside K or wholly past it.
struct NativeWeights {
  runtime::DType data = runtime::DType::e2m1, scale = runtime::DType::e8m0;
  int vec = 32;
  std::int64_t k = 0, n = 0, row_bytes = 0;
};

class PackedWeightStream {
 public:
  // Codes a lane converts at a time, and the k16 steps they make.
  static constexpr int kGroupCodes = 16, kStepsPerGroup = 4;
  static constexpr int kGroups = PackedWeightsLayout::kPieceCodes / kGroupCodes;  // per chunk

  PackedWeightStream(dsl::Kernel& k, const PackedWeightsLayout& layout, int row_tiles, int threads,
                     const dsl::Reg& tid);
  PackedWeightStream(dsl::Kernel& k, const Bf16Weights& weights, int row_tiles, int threads, const dsl::Reg& tid);
  PackedWeightStream(dsl::Kernel& k, const NativeWeights& weights, int row_tiles, int threads, const dsl::Reg& tid);

  // BlockCodes keeps a reference to this object's problem: not copied.
  PackedWeightStream(const PackedWeightStream&) = delete;
  PackedWeightStream& operator=(const PackedWeightStream&) = delete;

  // Whether the weights are codes with scales (else bf16: nothing to convert or fold).
  bool scaled() const { return !bf16_; }

  // Shared bytes of one stage (16-byte aligned).
  std::int64_t stage_bytes() const;

  // Where a work item's copies read: this warp's row tiles (the first one
  // `first_tile`, counted in 16-row tiles of N) of group `group`, computed
  // once an item. codes, scales: u64 global addresses of the packed tensors
  // (bf16: B, and scales unused).
  struct Source {
    dsl::Reg first_tile;
    // Per row tile, at chunk 0 (bf16: the first row, and B; native: per
    // row tile and half, this lane's copy of the row and its scale word).
    std::vector<dsl::Reg> codes, scales;
    std::vector<dsl::Reg> code_bytes, scale_bytes;  // likewise: 0 past N
  };
  Source source(const dsl::Reg& codes, const dsl::Reg& scales, const dsl::Reg& group, const dsl::Reg& first_tile);

  // Issues the copies of chunk `chunk` of the source into the stage at
  // `stage` (shared address). Tiles past N read nothing (their codes and
  // scales are zero; bf16: rows past N and K past its end). Commits
  // nothing: the caller groups copies.
  void issue(const dsl::Reg& stage, const Source& source, const dsl::Reg& chunk);

  // This lane's chunk, read back from a stage: for each row tile i and half
  // h (row q + 8h), words[2i + h] (its piece: 8 words of FP4, 16 of FP8)
  // and scales[2i + h] (its blocks' scale bytes, two to a register).
  struct Chunk {
    std::vector<dsl::Regs> words;
    std::vector<dsl::Regs> scales;
  };
  Chunk load(const dsl::Reg& stage);

  // Whether every conversion of the chunk may take the one-multiply way.
  dsl::Pred foldable(const Chunk& chunk);

  // The bf16x2 factors of the chunk's scales: out[2i + h][b] for block b of
  // the piece of row tile i, row q + 8h (the scale times 2^u where
  // `folded`, BlockCodes::scale_factor); none for bf16. Once a chunk and
  // way of converting: every group of a block shares them.
  std::vector<dsl::Regs> factors(const Chunk& chunk, bool folded);

  // The bf16 pairs of codes [16·group, 16·group + 16) of the lane's piece:
  // out[2i + h] holds 8 pairs of row tile i, row q + 8h.
  std::vector<dsl::Regs> fragments(const Chunk& chunk, const std::vector<dsl::Regs>& factors, int group, bool folded);

 private:
  bool fp4() const { return layout_.data == runtime::DType::e2m1; }
  int loads_per_row() const;  // 16-byte loads of a row's piece
  int lane_scale_bytes() const;
  void issue_bf16(const dsl::Reg& stage, const Source& source, const dsl::Reg& chunk);
  Source source_native(const dsl::Reg& codes, const dsl::Reg& scales, const dsl::Reg& first_tile);
  void issue_native(const dsl::Reg& stage, const Source& source, const dsl::Reg& chunk);
  void dequant_fp4(const dsl::Regs& words, const dsl::Reg& factor, const dsl::Regs& out, bool folded);
  Chunk load_bf16(const dsl::Reg& stage);
  dsl::Reg bf16_unit_swizzle(const dsl::Reg& unit, int row_parity);

  dsl::Kernel& k_;
  PackedWeightsLayout layout_;
  GemmAmaxProblem codes_problem_;  // what BlockCodes reads: the data and scale dtypes
  BlockCodes codes_;
  int row_tiles_, threads_;
  bool bf16_ = false;
  Bf16Weights bf16_weights_;
  bool native_ = false;
  NativeWeights native_weights_;
  dsl::Reg tid_, lane_;
};

}  // namespace warpforge::ops
