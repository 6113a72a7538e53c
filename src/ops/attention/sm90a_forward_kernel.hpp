// The sm_90a attention forward (FlashAttention-3's schedule) as a design on
// the warp-specialized template (tile/warp_specialized.hpp): a work item is
// a block of block_m() query rows of one (batch, head); the producer loads its Q
// tile once by TMA (on a barrier of the design's own) and K and V of each
// key block by TMA, K into the template's ring and V into a second ring of
// the design's (FA3's separate pipelines: K's slot is free once its S
// completed, a block before V's); the consumer warpgroups (two; three at
// head_dim 64, FA3's 192-row tile: a third independent softmax chain on
// each SM sub-partition) take 64 rows each of the item and, per key block,
// compute S = Q·Kᵀ with wgmma from shared memory (SS), mask the blocks the
// mask cuts, run the online softmax in registers (exp2, the scale folded
// into one fma), and add P·V with wgmma taking P from registers (RS).
// Named barriers make the warpgroups issue their Q·Kᵀ in turn, a ring, so
// that one's softmax runs while another's matrix products do (ping-pong,
// FA3 §3.1). Key blocks outside
// the mask are never loaded. Dense problems at head_dim 64 and 128 run
// persistent CTAs, one an SM, over the items (under a mask over pairs of a
// head's blocks, of equal work), each item's Q buffer freed by an mbarrier
// once its O, staged there after its last S, left it; an item's last P·V
// is issued with the next item's first S and its rows stored under that
// item's first softmax (no drained pipeline between items).
#pragma once

#include <cstdint>
#include <string>

#include "attention_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

struct Sm90aAttentionSpec {
  runtime::DType dtype = runtime::DType::bf16;
  int head_dim = 128;
  int block_n = 128;  // keys a stage
  int stages = 2;
  // Consumer warpgroups, 64 query rows each: an item is block_m() rows.
  int consumers = 2;
  bool varlen = false, has_lse = true;
  // CTAs that walk items (one an SM), else one item a CTA; paired: the units
  // walked are pairs of a head's blocks (sm90a_forward_kernel.cpp's QueryBlocks).
  bool persistent = false, paired = false;
  bool window_left = false, window_right = false, top_left = false;

  int block_m() const { return 64 * consumers; }
  int threads() const { return 128 * (consumers + 1); }  // the consumer warpgroups and the producer's
  // A slot of K's ring or of V's (`stages` each): one key block's K or V,
  // head_dim/64 panels of block_n rows of 128 bytes each.
  std::uint32_t stage_bytes() const { return static_cast<std::uint32_t>(block_n) * head_dim * 2; }
  std::uint32_t q_bytes() const { return static_cast<std::uint32_t>(block_m()) * head_dim * 2; }
  // Q's buffers: persistent CTAs load the next item's Q into the second
  // while this item's blocks run (one: its load waited for the item's last S).
  int q_buffers() const { return persistent ? 2 : 1; }
  std::uint32_t shared_bytes() const;  // what a launch requests (the template's layout)
  std::string kernel_name() const;
  friend bool operator==(const Sm90aAttentionSpec&, const Sm90aAttentionSpec&) = default;
};

Sm90aAttentionSpec sm90a_attention_spec(const AttentionProblem& problem);

// Parameters, in order: map_q, map_k, map_v (TMA maps, 128 bytes each:
// dims (head_dim, rows, heads, batch), boxes of 64 x block_m() (Q) and 64 x
// block_n (K, V) elements, 128-byte swizzle), O, lse, cu_seqlens_q,
// cu_seqlens_k (pointers), seq_q, seq_k, group (u32), o_batch, o_head,
// o_row, lse_batch, lse_head, lse_row (u64), scale_log2 (f32),
// window_left, window_right (s32), items, blocks, heads (u32: blocks =
// ceil(seq_q / block_m()), items = blocks · heads_q · batch, paired
// ceil(blocks / 2) · heads_q · batch). Launch: grid (items) or, persistent,
// (min(items, SMs)), block threads(), dynamic shared memory shared_bytes().
ptx::Module build_sm90a_attention_forward(const Sm90aAttentionSpec& spec);

}  // namespace warpforge::ops
