// Grouped GEMM for mixture-of-experts layers: one GEMM per group (expert),
// the groups' extents given as int32 offsets that stay on the device
// (nothing is read back to the host, so execute() can be captured in a CUDA
// graph with the routing decided on the GPU). The two forms are
// torch._grouped_mm's 2-D x 3-D and 2-D x 2-D ones, `offsets` its `offs`
// (cumulative ends: group g spans [offsets[g-1], offsets[g]), offsets[-1] = 0):
//
//   ragged M (the forward pass; and dA = dD·Bᵀ, with B's view transposed):
//     A (M, K), B (G, K, N), D (M, N):  D[r, :] = A[r, :]·B[g] for r in group g.
//     Rows past offsets[G-1] are written as zeros (jax.lax.ragged_dot's rule).
//   ragged K (the weights' gradient dB = Aᵀ·dD over the same offsets):
//     A (M, K), B (K, N), D (G, M, N):  D[g] = A[:, ks]·B[ks, :], ks in group g;
//     an empty group's D[g] is zeros.
//
//   ops::GroupedGemm op({.a = a, .b = b, .offsets = &offs, .d = d}, {.out_dtype = DType::bf16});
//   for (auto& why : op.check_support()) std::cout << why << "\n";
//   op.compile();  op.execute({.a = a, .b = b, .offsets = &offs, .d = d}, &stream);
//
// Operands (runtime::TensorView, strides in elements; every operand may have
// either of its two matrix dimensions contiguous, the other's stride and
// the base 16-byte aligned):
//  - bf16 x bf16 (or f16 x f16), f32 accumulation, D f32, bf16 or f16.
//  - Weight-only (ragged M): A bf16, B block-scaled — MXFP4 (e2m1 codes, e8m0
//    scales per 32 along K), NVFP4 (e2m1, e4m3 per 16) or MXFP8 (e4m3/e5m2,
//    e8m0 per 32) — given in the packed order the weight-streaming kernel
//    reads (prepack_weights below, done once when the weights are loaded): B
//    is the 1-D packed codes (u8 for FP4; e4m3/e5m2 for FP8) and `sfb` the
//    1-D packed scales (e8m0, or e4m3 for NVFP4; i8 means e8m0).
//  - Both quantized (ragged M, GemmAmax's semantics per group): A's codes
//    (M, K) k-major (FP4 as u8 (M, K/2)) with `sfa` in GemmAmax's 128x4
//    layout over M rows (scale_factor_layout.hpp), B packed as above, and
//    `amax` (f32, one element): the kernel folds max |D| over every group
//    (on the f32 accumulator, before D's conversion) into it with an atomic
//    max, so execute() needs it initialised (+0.0, or a running maximum).
// Exact: every product exact (block-scaled codes times their scales are
// exact in bf16, REFERENCE.md), accumulation in f32.
//
// Offsets must be non-decreasing and at most M (ragged M) or K (ragged K);
// the kernels read them as the running maximum of the offsets so far,
// clamped to [0, M or K], so that wrong offsets can never make a kernel
// read or write outside the tensors (the groups they then give are the
// caller's problem, not a fault).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/runtime/dtype.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// Which kernel runs: automatic (the first that takes the problem), or the
// one named (its refusals are then check_support()'s):
//  - stream: block-scaled B (packed), few tokens a group — each CTA streams
//    its rows of a group's weights once through a per-thread cp.async ring,
//    converts them in registers into mma.sync fragments and multiplies the
//    group's tokens (Dᵀ = B·Aᵀ), K split over CTAs so that every SM streams.
//    Also bf16 weights whose K is contiguous, at up to 32 tokens a group.
//  - sm90a: bf16/f16 ragged M with K-major A and B on Hopper: a design of the
//    warp-specialized template (TMA producer, two wgmma consumer
//    warpgroups), persistent over the groups' tiles.
//  - sm80: bf16/f16 operands, both forms: cp.async into swizzled shared
//    memory, ldmatrix, mma.sync, persistent over the groups' tiles.
enum class GroupedGemmKernel { automatic, stream, sm90a, sm80 };
std::string_view name(GroupedGemmKernel kernel);  // "auto", "stream", "sm90a", "sm80"
std::optional<GroupedGemmKernel> parse_grouped_gemm_kernel(std::string_view text);

struct GroupedGemmOptions {
  runtime::DType out_dtype = runtime::DType::bf16;  // D: f32, bf16 or f16
  int sf_vec_size = 32;                             // block-scaled operands: 16 (NVFP4) or 32
  GroupedGemmKernel kernel = GroupedGemmKernel::automatic;
  // false: compile() allocates the kernel's workspace (workspace_bytes());
  // true: it allocates none, and every execute() of a kernel that needs one
  // brings it (contiguous, zero-filled before its first use).
  bool caller_workspace = false;
};

// The tensors of one problem (and of each execution). offsets: int32 with
// one element a group; may be null when B holds one group (the dense
// weight-only GEMM, B of rank 2 or a packed B with groups = 1: D = A·B).
struct GroupedGemmTensors {
  const runtime::TensorView& a;
  const runtime::TensorView& b;
  const runtime::TensorView* offsets;
  const runtime::TensorView& d;
  const runtime::TensorView* sfa = nullptr;
  const runtime::TensorView* sfb = nullptr;
  const runtime::TensorView* amax = nullptr;
};

class GroupedGemm {
 public:
  // The views fix the problem (shapes, strides, dtypes, device); execute()
  // may be given other views of the same description.
  explicit GroupedGemm(const GroupedGemmTensors& tensors, GroupedGemmOptions options = {});
  ~GroupedGemm();
  GroupedGemm(GroupedGemm&&) noexcept;
  GroupedGemm& operator=(GroupedGemm&&) noexcept;

  // Every reason the problem cannot run, each naming the value, the rule
  // and what would be accepted; empty when it can.
  std::vector<std::string> check_support() const;
  std::string_view kernel_name() const;  // "stream", "sm90a" or "sm80"
  // The problem, the kernel chosen with its configuration and workspace,
  // and why each kernel before it was not taken.
  std::string describe() const;
  // Global memory the kernel needs beside the tensors (the split-K partial
  // sums and their counters); compile() allocates it unless caller_workspace.
  std::size_t workspace_bytes() const;
  // Builds the kernel (JIT, cached). Throws OpsError listing check_support()'s reasons.
  void compile();
  // Runs on `stream` (the null stream when absent); compiles first if
  // needed. Throws OpsError when a view differs from the construction's
  // description. Once compiled it allocates nothing and never waits for the
  // GPU (CUDA-graph safe). Runs that share a workspace (the op's own
  // included) must not overlap: run them on one stream.
  void execute(const GroupedGemmTensors& tensors, runtime::Stream* stream = nullptr,
               const runtime::TensorView* workspace = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One-shot, bf16/f16 operands: allocates D on A's device ((M, N), or
// (G, M, N) for ragged K, row-major, of options.out_dtype), runs, and waits
// for the stream. (Block-scaled operands: GroupedGemm, with D allocated.)
runtime::Tensor grouped_gemm(const runtime::TensorView& a, const runtime::TensorView& b,
                             const runtime::TensorView* offsets, GroupedGemmOptions options = {},
                             runtime::Stream* stream = nullptr);

// ---------------------------------------------------------------------------
// Packed block-scaled weights: the order the stream kernel reads.
//
// Logically B[g] is K x N (torch's (G, K, N)); its codes are given k-major,
// as (G, N, K) (FP4 two to a byte, the lower k in the low nibble), with the
// scales in the 128x4 layout over N rows and G batches (GemmAmax's SFB).
// The packed codes are, for each group g, each 16-row tile of N (rows
// 16r .. 16r + 15, past N zero) and each chunk of 256 codes along K (past K
// zero), one block that a warp reads with coalesced 16-byte loads:
//
//   block (g, r, c) at ((g·R + r)·C + c)·block_bytes, R = ceil(N/16), C = ceil(K/256)
//   inside it, load j of lane l (j = 0 .. 2·piece/16 - 1) at j·512 + l·16,
//   lane l = 4q + t holding rows 16r + q (loads of the first half of j) and
//   16r + q + 8 (the second half), codes [256c + 64t, 256c + 64t + 64) of each
//
// so that the lanes of an mma.sync m16n8k16 row group hold the rows of its
// A fragment (PTX ISA 9.7.14.5.8: rows groupID and groupID + 8), a piece of
// 64 codes a row each (FP4 32 bytes, FP8 64: block_bytes 2048 or 4096).
// FP4 codes have their bits scattered inside each 32-bit word (kFp4Bits):
// codes 2p and 2p + 1 of the word's 8 are the low and high halves of bf16
// pair p, each bit placed so that a kernel moves it into bf16's sign
// (bit 15) or fields (bits 8..6) with few instructions: every pair by at
// most one left and one right shift of the word (pair 0 none, pair 1 one,
// pairs 2 and 3 both), so that a thread that takes one pair of each word
// (the sm90a RS design: pair t of lane t of a quad) moves it with the same
// two shifts and masks whatever its pair, their amounts and masks its own. The
// packed scales hold, for the same block, lane l's scale bytes at
// l·S (S = 4 at 32 codes a scale, 8 at 16): row 16r + q's scales of its
// piece in order, then row 16r + q + 8's (past N or K: 0).
struct PackedWeightsLayout {
  runtime::DType data = runtime::DType::e2m1;   // e2m1, e4m3, e5m2
  runtime::DType scale = runtime::DType::e8m0;  // e8m0, e4m3
  int vec = 32;                                 // 16 (e2m1 with e4m3 scales) or 32
  std::int64_t groups = 1, k = 0, n = 0;

  static constexpr std::int64_t kRowTile = 16, kChunk = 256, kPieceCodes = 64;
  // FP4: bit b (0 M, 1 E0, 2 E1, 3 S) of code i (0..7) of a packed 32-bit
  // word (little-endian bytes) lies at bit kFp4Bits[i / 2][b] + 16·(i % 2).
  // Pair 0 lies in bf16's places; pair 1 is them shifted down 6; pair 2's
  // M, E0 and S lie 3 below, its E1 5 above; pair 3's M and S 1 below, its
  // E0 and E1 3 above. (No four shifts of one pair's places tile a 16-bit
  // half: some pair needs two.)
  static constexpr int kFp4Bits[4][4] = {{6, 7, 8, 15}, {0, 1, 2, 9}, {3, 4, 13, 12}, {5, 10, 11, 14}};
  std::int64_t row_tiles() const { return (n + kRowTile - 1) / kRowTile; }
  std::int64_t chunks() const { return (k + kChunk - 1) / kChunk; }
  std::int64_t block_bytes() const;        // codes of one (g, r, c) block
  std::int64_t scale_block_bytes() const;  // 32 lanes x S
  std::int64_t code_bytes() const { return groups * row_tiles() * chunks() * block_bytes(); }
  std::int64_t scale_bytes() const { return groups * row_tiles() * chunks() * scale_block_bytes(); }
  // "MXFP4 (e2m1 x e8m0/32), 8 groups of K 4096 x N 14336"
  std::string describe() const;
};

struct PackedWeights {
  PackedWeightsLayout layout;
  std::vector<std::uint8_t> codes, scales;
};

// Packs host weights: `codes` (G, N, K) k-major bytes as described above
// (FP4 (G, N, K/2) two a byte, K even), `scales` the 128x4 layout over N rows
// and G batches. Throws OpsError for a format GroupedGemm does not take
// (the rules of GemmAmax's formats) or sizes that disagree.
PackedWeights prepack_weights(const PackedWeightsLayout& layout, std::span<const std::uint8_t> codes,
                              std::span<const std::uint8_t> scales);

}  // namespace warpforge::ops
