// Weight-only prefill in the RS form (sm_90a): bf16 tokens against packed
// block-scaled expert weights (MXFP4, NVFP4, MXFP8; prepack_weights), ragged M, computed
// as Dᵀ = W·Xᵀ per group: the weights on wgmma m64nTk16's 64-row side from
// registers, the group's tokens on its N side (T of them) from shared
// memory, so a weight is converted once for T tokens and never enters
// shared memory as bf16.
//
// A design of the warp-specialized template (tile/warp_specialized.hpp):
// two consumer warpgroups of 64 weight rows each (a CTA's item is 128
// weight rows x T tokens of one group; three, 192 rows, at T <= 128, where
// the conversion's latency wants more warps and their accumulators leave
// the registers) and the producer warpgroup's first thread, whose stage
// holds the tokens' tile (T rows x 64 of K, bf16, the 128-byte swizzle:
// wgmma's K-major B) and the k-block's packed codes and scales of the
// item's weight rows (GroupedWeightTiles::load, the same stage
// the session-6 shared-memory design loads). The work source is the group
// schedule (group_schedule.hpp) over (group, token tile, weight-row tile),
// bands of token tiles walked weight-tile-major (the CTAs at once share a
// weight panel, read from DRAM about once); the rows past the last group
// are its pseudo-group's items, stored as zeros.
//
// The tokens keep their order (no pre-pass): wgmma's A fragment of k16
// step s (PTX ISA 9.7.15.5.1.1.1, A in registers: row g = lane / 4 and
// g + 8 of the warp's 16, columns 2t, 2t + 1 and 2t + 8, 2t + 9, t =
// lane % 4) holds codes 16s + 2t, + 1 and 16s + 8 + 2t, + 1 of the
// k-block, which in the packed layout (PackedWeightsLayout) are pair t of
// words 2s and 2s + 1 of the piece of lane 4g + kb % 4 of the row: every
// thread of the quad reads the same 64 bytes (two rows' pieces) and takes
// its own pair of each word. FP4: every pair's bits reach bf16's places by
// at most two rotations of the word (kFp4Bits), so one expression serves
// all four with the thread's two constants: keep the pair's 8 bits,
// multiply by 2^r1 + 2^r2 into 64 bits (the two rotated copies, disjoint:
// no carries), or the product's halves, keep bf16's places — 4
// instructions a bf16 pair with the scale's multiply (s7's three shifts and
// masks took 7; BlockCodes: exact, one multiply where the scales fold with
// the codes' bias, else two). FP8 (4 codes a word): words 4s + t / 2
// and + 2, half t % 2, BlockCodes::dequant_fp8 (NaN and inf codes exact).
// The next k-block converts while the current one's wgmma run (two
// fragment sets, two k-blocks a trip).
//
// A group's last token tile runs wgmma over the fewest tokens, in 64s, that
// cover the group's rest (N = 64, 128, .. T: the accumulators' first
// columns), not T whatever the group holds.
//
// D (M x N, row-major) is stored from the accumulators transposed: each
// element where its token is inside the group and its row inside N. With
// few units (a dense layer at 128 tokens: 64 on 132 SMs) K is split over
// neighbouring CTAs, the unit's last split to arrive adding every split's
// sums in split order through the workspace (split_k_reduce) and storing D.
// Parameters: map_a (A (M, K) bf16, K-major, boxes of 64 x T), map_b,
// map_sfb (GroupedWeightTiles' maps at 128 rows), D, offsets, extent (M),
// and with K split the workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "group_schedule.hpp"
#include "grouped_gemm_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

inline constexpr const char* kSm90aGroupedRsKernel = "grouped_gemm_sm90a_rs";

struct GroupedRsConfig {
  int tokens = 256;  // T: wgmma's N, a multiple of 8 up to 256
  int stages = 5;
  // K ranges a unit (work items on neighbouring CTAs), their partial sums
  // added in split order through the workspace by the unit's last
  // (split_k_reduce, transposed_output.hpp): deterministic.
  int splits = 1;
  // Consumer warpgroups, 64 weight rows each: 2, or 3 at T <= 128 (their
  // accumulators leave room for 152 registers a thread; T = 192 x 3 needs
  // 160 and ran dense 8192 x 8192 1% faster: s9 gpu-w1, not kept).
  int consumers = 2;
  static constexpr int kBlock = 64;  // K a stage
  int rows() const { return 64 * consumers; }  // weight rows a CTA
  std::string describe() const;  // "128 rows x 256 tokens x 64 s5", ", K split 2 ways"
  friend bool operator==(const GroupedRsConfig&, const GroupedRsConfig&) = default;
};

// Whether the sm90a path runs the problem on the RS design: packed weights
// (which the problem takes in ragged M against bf16 tokens; the path
// refuses the rest, sm90a_grouped_refusals).
bool sm90a_grouped_rs_takes(const GroupedGemmProblem& p);

// T, the tokens' tile a stage brings: twice the tokens a group has on
// average (2M / G, rounded up to 64, 64 to 256; routing is skewed, and a
// group's last tile multiplies only what it holds; one group: M), and as many stages as
// fit. T = 64 where groups average 17-32 tokens (automatic selection's
// stream kernel takes FP4 up to 16, FP8 up to 32): on an H200 (s9 gpu-w2, MXFP4, T = 64 x 3
// warpgroups) mixtral 128 tokens 371.5 us where T = 128 took 426. Not at
// 64 a group: there (s7 window 1, qwen3 1024 tokens) T = 64 ran 0.72 of
// bf16, each weight converted for every 64 tokens. K split where the
// fewest units the problem can have (every row in whole tiles) fill at
// most half of the `sms` SMs (a dense 8192 x 8192 layer at 128 tokens: 64
// units), up to 4 ways and at least 8 k-blocks a split, at T <= 128 (the
// sums' copy beside the accumulators). WARPFORGE_RS_TILING=T,C[,S]
// overrides T, the consumers and the split (GPU experiments).
GroupedRsConfig sm90a_grouped_rs_config(const GroupedGemmProblem& p, std::int64_t sms);
// The split sums' slots and the units' counters (0 without a split); the
// counters must be zero before the first launch, and every launch leaves
// them so.
std::size_t sm90a_grouped_rs_workspace_bytes(const GroupedGemmProblem& p, const GroupedRsConfig& c);

GroupScheduleOptions sm90a_grouped_rs_schedule(const GroupedGemmProblem& p, const GroupedRsConfig& c);
std::uint32_t sm90a_grouped_rs_shared_bytes(const GroupedGemmProblem& p, const GroupedRsConfig& c);

// Throws OpsError for a configuration or problem it cannot build.
ptx::Module build_sm90a_grouped_rs(const GroupedGemmProblem& p, const GroupedRsConfig& c);

}  // namespace warpforge::ops
