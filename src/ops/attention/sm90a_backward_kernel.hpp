// The sm_90a attention backward's dK/dV kernel (FlashAttention-3's
// backward, FA3 §3 and its appendix) as a design on the warp-specialized
// template (tile/warp_specialized.hpp). With P = exp2(S·scale·log2e - lse·log2e)
// recomputed from the forward's log-sum-exp and D = rowsum(dO ∘ O) (the
// sm80 backward's rows kernel writes D before it runs):
//
//   dV += Pᵀ·dO    dPᵀ = V·dOᵀ    dSᵀ = Pᵀ ∘ (dPᵀ - D)    dK += dSᵀ·Q    dQ += dS·K
//
// A CTA owns a block of block_n keys of one KV head: the producer loads its
// K and V once by TMA (on a barrier of the design's own), then Q and dO of
// each query block (block_m rows) that sees the keys, for every query head of
// the group (GQA: dK and dV sum over the group in registers), through the
// template's ring. At head_dim 64 and 128 (128 keys) each consumer
// warpgroup takes 64 of the keys and all of dK's and dV's columns; at 256
// (64 keys: dK and dV of 64 keys over 256 columns would not fit a
// warpgroup's registers) each takes all 64 keys and half of dK's and dV's
// columns, and Sᵀ and dPᵀ of the 64 keys against its half of the block's
// queries: each product is computed once (each warpgroup computing Sᵀ and
// dPᵀ whole had been 1.4x the tensor work), and both halves of Pᵀ
// and dSᵀ meet in shared memory, where dV's and dK's wgmma read them (a
// named barrier a warpgroup says when its dV has read Pᵀ's one buffer).
// Per query block a warpgroup computes Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ with wgmma
// from shared memory, Pᵀ and dSᵀ in registers (lse and D of the block's
// queries staged by the warpgroup in shared memory), and dV += Pᵀ·dO,
// dK += dSᵀ·Q with wgmma taking Pᵀ and dSᵀ from registers (d256: from
// shared memory). Fast mode: dSᵀ goes to shared
// memory and each warpgroup computes a dQ product (dS read transposed from
// shared memory, wgmma's MN-major A) after its dV and dK products: its half
// of dQ's columns, (d/2)w.., over the CTA's keys. The product goes
// through shared memory (handed over on a full and an empty mbarrier) to a
// dQ writer of the producer warpgroup (one a consumer warpgroup), which
// adds it into the f32 workspace off the consumers' path (FA3's dQ
// writer): at d64 and d128 lane 0 of a writer warp with one TMA reduce-add
// (cp.reduce.async.bulk.tensor .add; the tile laid out as a box of the
// workspace's map), at d256 the writer warp with red.global.add.v4.f32 (512
// bytes a warp instruction; dq_by_tma_reduce); the sm80 finish kernel
// converts it. Deterministic mode adds
// no dQ here (the sm80 dq kernel computes it in a fixed order). dK and dV
// are summed in a fixed order in either mode. Query blocks outside the
// mask are never loaded.
#pragma once

#include <cstdint>
#include <string>

#include "attention_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

struct Sm90aBackwardSpec {
  runtime::DType dtype = runtime::DType::bf16;
  int head_dim = 128;  // 64, 128 or 256
  int block_m = 64;    // queries a step: 64, or 128 (FA3's tile at head_dim 64)
  int block_n = 128;   // keys a CTA: 128 (a warpgroup's 64 each), or 64 at head_dim 256 (both warpgroups')
  int stages = 2;      // ring slots of Q and dO
  bool varlen = false, window_left = false, window_right = false, top_left = false;
  bool deterministic = false;

  // Whether the warpgroups split dK's and dV's columns (each over all the
  // CTA's keys) rather than the keys (each over all the columns).
  bool splits_columns() const { return block_n == 64; }
  int threads() const { return 384; }  // two consumer warpgroups and the producer's
  // A consumer warpgroup's part of a query block's dQ, over all the CTA's
  // keys, is 64 rows (the wgmma's M) by dq_columns(): with 64-query blocks
  // every query and half of the columns, with 128-query blocks its 64
  // queries and every column.
  int dq_columns() const { return head_dim * block_m / 128; }
  // How the dQ writers add the consumers' dQ tiles into the workspace: one
  // TMA reduce-add a tile (d64, d128), or each writer warp's
  // red.global.add.v4.f32 (d256, where the reduce-add's 32-byte rows
  // measured 17% slower: docs/experiments/2026-11-30-attention-backward.md).
  bool dq_by_tma_reduce() const { return head_dim != 256; }
  // K or V of the CTA's keys: head_dim/64 panels of block_n rows of 128 bytes.
  std::uint32_t kv_bytes() const { return static_cast<std::uint32_t>(block_n) * head_dim * 2; }
  // Q or dO of one query block (a ring slot holds both).
  std::uint32_t q_bytes() const { return static_cast<std::uint32_t>(block_m) * head_dim * 2; }
  std::uint32_t stage_bytes() const { return 2 * q_bytes(); }
  std::uint32_t shared_bytes() const;  // what a launch requests
  std::string kernel_name() const;
  friend bool operator==(const Sm90aBackwardSpec&, const Sm90aBackwardSpec&) = default;
};

Sm90aBackwardSpec sm90a_backward_spec(const AttentionProblem& problem);

// Parameters, in order: map_q, map_k, map_v, map_do (TMA maps, 128 bytes
// each: dims (head_dim, rows, heads, batch), boxes of 64 elements x block_m rows
// (Q, dO) and 64 x block_n (K, V), 128-byte swizzle), map_dq (the
// workspace's dq_accum of sm80_backward_kernels.hpp: dq_accum_tensor_map,
// read where dq_by_tma_reduce in fast mode); lse, dK, dV, cu_seqlens_q,
// cu_seqlens_k, delta, dq_accum (pointers; the workspace's); seq_q, seq_k, group, rows_q, heads_q (u32);
// lse_batch, lse_head, lse_row, dk_*, dv_* (u64); scale, scale_log2 (f32);
// window_left, window_right (s32); head_group (u32: the (head, sequence)
// pairs whose key blocks run together, ≥ 1). Launch: grid (heads_kv · batch,
// ceil(seq_k / block_n)), block threads(), dynamic shared memory shared_bytes().
ptx::Module build_sm90a_backward_kv(const Sm90aBackwardSpec& spec);

}  // namespace warpforge::ops
