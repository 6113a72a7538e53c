// The sm_80 attention backward (FlashAttention-2's algorithm, written with
// the DSL and the sm_80 attention pieces). With P = exp(S·scale - lse)
// recomputed from the forward's log-sum-exp:
//
//   D  = rowsum(dO ∘ O)                  rows: one f32 per (query, head)
//   dV = Pᵀ·dO    dP = dO·Vᵀ    dS = P ∘ (dP - D)
//   dK = scale·dSᵀ·Q    dQ = scale·dS·K
//
// Four kernels, run in order over a workspace (delta: D per (head, query
// row); dq_accum: f32 dQ sums, fast mode only):
//  - rows:   D, and the zeroed dq_accum (fast mode);
//  - kv:     one CTA per (key block of 64, KV head, sequence): K and V of the
//            block staged once, then for each query head of the group and
//            each query block that sees the block, Q, dO, lse and D staged by
//            cp.async (the next block's while this one is used, where shared
//            memory allows two buffers) and Sᵀ, Pᵀ, dPᵀ, dSᵀ computed a warp per 16 keys, dV
//            and dK summed in registers (a fixed order: deterministic), and
//            in fast mode dS·K added into dq_accum with f32 atomics (dSᵀ
//            through shared memory);
//  - dq:     deterministic mode: one CTA per query block recomputes S, P,
//            dP, dS against every key block in order and sums dQ in
//            registers;
//  - finish: fast mode: dQ = scale·dq_accum in the output dtype.
#pragma once

#include <cstddef>
#include <string>

#include "attention_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

struct Sm80BackwardSpec {
  runtime::DType dtype = runtime::DType::bf16;
  int head_dim = 128;
  int block_m = 64;  // queries a block (the kv kernel's; the dq kernel takes 64)
  int block_n = 64;  // keys a block
  // Buffers of the kv kernel's Q, dO, lse and D: with 2, the next query
  // block's are copied while this one's are used.
  int q_stages = 2;
  bool varlen = false, window_left = false, window_right = false, top_left = false;
  bool deterministic = false;

  int threads() const { return 128; }
  int kv_shared_bytes() const;
  int q_stage_bytes() const;  // one buffer of Q, dO, lse and D
  int dq_shared_bytes() const;
  std::string name(const char* kernel) const;  // warpforge_attention_bwd_sm80_<kernel>_...
  friend bool operator==(const Sm80BackwardSpec&, const Sm80BackwardSpec&) = default;
};

Sm80BackwardSpec sm80_backward_spec(const AttentionProblem& problem);

// The workspace: delta (f32, heads_q x rows_q) at 0, then (fast mode)
// dq_accum (f32, rows_q x heads_q x head_dim) at dq_accum_offset(); rows_q =
// batch·seq_q (dense) or total_q (varlen). A row's index in both is
// (dense) b·seq_q + i or (varlen) cu_seqlens_q[b] + i.
std::size_t backward_rows_q(const AttentionProblem& p);
std::size_t dq_accum_offset(const AttentionProblem& p);
std::size_t backward_workspace_bytes(const AttentionProblem& p);

// Every kernel takes, in order: its pointers, then seq_q, seq_k, group,
// rows_q, heads_q (u32), the (batch, head, row) strides (u64) of the views it
// reads or writes in the order of its pointers, then scale, scale_log2 (f32)
// and window_left, window_right (s32).
//  rows:   O, dO, cu_seqlens_q, delta, dq_accum; strides O, dO.
//          grid (ceil(seq_q / 64), heads_q, batch).
//  kv:     Q, K, V, dO, lse, dK, dV, cu_seqlens_q, cu_seqlens_k, delta,
//          dq_accum; strides Q, K, V, dO, lse, dK, dV.
//          grid (ceil(seq_k / block_n), heads_kv, batch).
//  dq:     Q, K, V, dO, lse, dQ, cu_seqlens_q, cu_seqlens_k, delta;
//          strides Q, K, V, dO, lse, dQ. grid (ceil(seq_q / 64), heads_q, batch).
//  finish: dq_accum, dQ, cu_seqlens_q; strides dQ.
//          grid (ceil(seq_q / 64), heads_q, batch).
// Every block is threads() threads; dynamic shared memory kv_shared_bytes()
// and dq_shared_bytes() for kv and dq, none for the others.
ptx::Module build_sm80_backward_rows(const Sm80BackwardSpec& spec);
ptx::Module build_sm80_backward_kv(const Sm80BackwardSpec& spec);
ptx::Module build_sm80_backward_dq(const Sm80BackwardSpec& spec);
ptx::Module build_sm80_backward_finish(const Sm80BackwardSpec& spec);

}  // namespace warpforge::ops
