// The decode kernels (flash-decoding over a paged KV cache), written with the
// DSL and the sm_80 attention pieces; this is the cp.async one, which runs
// what the TMA-fed one (decode_tma_kernel.hpp, sm_90a) does not take:
//
//  - split: one CTA per (split, KV head, sequence). The rows are the KV
//    head's query heads times the query tokens (grouped-query packing: K
//    and V are read once for all of them), padded to 16-row tiles. Its share
//    of the sequence's keys, blocks split, split + splits, split +
//    2·splits, ... (interleaved: a split's first block is known before the
//    sequence's kv_len, which sets only how many it takes, on the device),
//    streams through a ring of cp.async stages (16-byte copies,
//    each row's page found in the block table), each stage a block of keys
//    cut among the warps that share a row tile; each warp runs the online
//    softmax over its keys, and the warps of a row tile merge their results
//    by their log-sum-exps through shared memory. With one split the CTA
//    writes O and lse; with several, each writes its normalised partial O
//    (f32) and log-sum-exp to the workspace, then counts itself in at its
//    (sequence, KV head)'s counter; the CTA that counts last merges the
//    splits' partials of its rows by their log-sum-exps (O = Σ_s 2^(lse_s -
//    L)·O_s with L = log2 Σ_s 2^lse_s) and writes O and lse: no second
//    kernel, so a launch and its wait for the whole grid are saved.
#pragma once

#include <cstdint>
#include <string>

#include "warpforge/ptx/module.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

struct DecodeSpec {
  runtime::DType dtype = runtime::DType::bf16;
  int head_dim = 128;
  int group = 1, q_tokens = 1;  // rows = group · q_tokens
  int block_n = 64, stages = 3;
  bool causal = true, window_left = false, has_lse = true;
  bool split_output = false;  // several splits: partials to the workspace, the last CTA combines
  // Built for sm_90a (a Hopper device): PTX 8.4, so the K and V copies carry
  // an L2 prefetch size (PTX ISA 7.4+); the instructions are sm_80's.
  bool sm90a = false;
  // The TMA-fed kernel (decode_tma_kernel.hpp; sm_90a): K and V come in
  // copies of page_rows keys (min(page_size, block_n): a power of two from
  // 16 that divides the page and holds a warp's keys).
  bool tma = false;
  int page_rows = 0;

  int rows() const { return group * q_tokens; }
  int row_tiles() const;             // 16-row tiles: 1, 2 or 4
  int key_groups() const { return 4 / row_tiles(); }  // warps sharing a row tile
  int threads() const { return tma ? 256 : 128; }     // TMA: the producer warpgroup too
  // Q, K and V in shared memory as panels of this many columns: 16 in the
  // 32-byte swizzle (cp.async), 64 in the 128-byte swizzle (TMA: a box's
  // rows of 128 bytes).
  int panel_width() const { return tma ? 64 : 16; }
  std::uint32_t stage_bytes() const;                  // a block's K and V
  int shared_bytes() const;
  std::string kernel_name() const;
  friend bool operator==(const DecodeSpec&, const DecodeSpec&) = default;
};

// Parameters, in order: Q, k_cache, v_cache, block_table, kv_lens, O, lse,
// partial (pointers; lse and partial unread where the spec has none); the
// element strides (u64) q_batch, q_head, q_row, k_page, k_slot, k_head,
// v_page, v_slot, v_head, o_batch, o_head, o_row, lse_batch, lse_head,
// lse_row, table_row; page_size, table_width (the block table's entries a
// sequence), splits, heads_q (u32); scale_log2 (f32); window_left (s32).
// Launch: grid (splits, heads_kv, batch), block threads(), dynamic shared
// memory shared_bytes(). The workspace (split_output; zero-filled before
// its first use, left so by every launch): the partial O at partial +
// ((row·splits + split)·head_dim)·4, the lse (log2 units) at partial +
// rows_total·splits·head_dim·4 + (row·splits + split)·4, where row =
// (batch·heads_q + head)·q_tokens + token, then a u32 counter a (sequence,
// KV head) at partial + rows_total·splits·(head_dim + 1)·4 + (b·heads_kv +
// g)·4.
ptx::Module build_decode_split(const DecodeSpec& spec);

}  // namespace warpforge::ops
