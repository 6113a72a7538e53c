// The sm_80 attention forward kernel (FlashAttention-2's schedule, written
// with warpforge's DSL and tile primitives): one CTA per block of block_m
// query rows of one (batch, head), each warp owning 16 rows; K and V blocks
// of block_n keys staged by cp.async (V's copy runs under Q·Kᵀ, the next K's
// under P·V), ldmatrix into mma.sync m16n8k16, the online softmax in
// registers with exp2 and the scale folded into one fma, P reused from the
// accumulator registers as P·V's A operand, key blocks wholly outside the
// mask (causal, sliding window) never visited and the mask applied only in
// the blocks it cuts.
#pragma once

#include <string>

#include "attention_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

struct Sm80AttentionSpec {
  runtime::DType dtype = runtime::DType::bf16;
  int head_dim = 128;
  int block_m = 64, block_n = 64;  // warps = block_m / 16
  bool varlen = false, has_lse = true;
  bool window_left = false, window_right = false;  // bounded sides of the mask
  bool top_left = false;

  int warps() const { return block_m / 16; }
  int threads() const { return 32 * warps(); }
  int shared_bytes() const { return (block_m + 2 * block_n) * head_dim * 2; }
  std::string kernel_name() const;
  friend bool operator==(const Sm80AttentionSpec&, const Sm80AttentionSpec&) = default;
};

Sm80AttentionSpec sm80_attention_spec(const AttentionProblem& problem);

// Parameters, in order: Q, K, V, O, lse, cu_seqlens_q, cu_seqlens_k
// (pointers; lse and cu_seqlens unread where the spec has none), seq_q,
// seq_k (u32, dense lengths), group (u32, heads_q / heads_kv), then the
// element strides (u64) q_batch, q_head, q_row, k_..., v_..., o_..., lse_...,
// scale_log2 (f32, scale·log2(e)), window_left, window_right (s32).
// Launch: grid (ceil(seq_q / block_m), heads_q, batch), block threads(),
// dynamic shared memory shared_bytes().
ptx::Module build_sm80_attention_forward(const Sm80AttentionSpec& spec);

}  // namespace warpforge::ops
