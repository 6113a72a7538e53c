// Attention for decoding: a few query tokens a sequence (1 to 8, for
// speculative decoding) against a KV cache kept in pages (vLLM's and
// FlashAttention's paged layout), the keys of one sequence split across CTAs
// and the splits' partial results combined by their log-sum-exps
// (flash-decoding), so that a batch of one still streams with every SM.
//
//   ops::attention_decode({.q = q, .k_cache = kc, .v_cache = vc, .block_table = bt,
//                          .kv_lens = lens, .o = o});
//   ops::AttentionDecode op(tensors, options);  op.execute(tensors, &stream);
//
// Tensors (strides in elements, head_dim of stride 1, the other strides of
// Q, O and the caches multiples of 8, 16-byte aligned bases):
//  - Q and O (batch, heads_q, q_tokens, head_dim), bf16 or f16: the last
//    q_tokens tokens of each sequence, whose keys and values are already in
//    the cache.
//  - k_cache, v_cache (pages, page_size, heads_kv, head_dim), Q's dtype;
//    heads_kv divides heads_q; page_size any value >= 1.
//  - block_table (batch, pages_per_sequence) i32: key j of sequence b is in
//    page block_table[b, j / page_size], slot j % page_size.
//  - kv_lens (batch) i32 on the device: the keys of each sequence, its
//    query tokens' included (1 <= kv_len <= pages_per_sequence·page_size,
//    kv_len >= q_tokens; the kernels trust it).
//  - lse (batch, heads_q, q_tokens) f32, optional.
// Query token t of a sequence of kv_len keys sees keys
// [kv_len - q_tokens + t - window_left, kv_len - q_tokens + t] (causal, the
// default) or every key (causal = false); window_left -1 is unbounded.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

struct AttentionDecodeTensors {
  const runtime::TensorView& q;
  const runtime::TensorView& k_cache;
  const runtime::TensorView& v_cache;
  const runtime::TensorView& block_table;
  const runtime::TensorView& kv_lens;
  const runtime::TensorView& o;
  const runtime::TensorView* lse = nullptr;
};

struct AttentionDecodeOptions {
  std::optional<double> scale;  // > 0; default 1/sqrt(head_dim)
  bool causal = true;
  std::int64_t window_left = -1;
  // CTAs each sequence's keys are split across; 0: chosen so that every SM
  // streams (batch x heads_kv x splits covers the device twice).
  int splits = 0;
  // false: compile() allocates the workspace of the splits' partial results;
  // true: execute() is given one.
  bool caller_workspace = false;
};

class AttentionDecode {
 public:
  AttentionDecode(const AttentionDecodeTensors& tensors, AttentionDecodeOptions options = {});
  ~AttentionDecode();
  AttentionDecode(AttentionDecode&&) noexcept;
  AttentionDecode& operator=(AttentionDecode&&) noexcept;

  std::vector<std::string> check_support() const;
  // The problem, the splits and the kernels that run it.
  std::string describe() const;
  // The splits' partial O (f32) and log-sum-exps, splits x batch x heads_q x
  // q_tokens x (head_dim + 1) x 4 bytes, and a counter a sequence and KV
  // head, batch x heads_kv x 4 bytes; none with one split.
  std::size_t workspace_bytes() const;
  int splits() const;
  void compile();
  // Allocates nothing and never waits once compiled (CUDA-graph safe).
  // workspace: contiguous, 16-byte aligned, workspace_bytes() or more,
  // zero-filled before its first use (every run leaves its counters at zero
  // again; another description reads its counters elsewhere: zero-fill it
  // again first); absent, the op's own. Runs that share a workspace (the
  // op's own included) must not overlap: run them on one stream.
  void execute(const AttentionDecodeTensors& tensors, runtime::Stream* stream = nullptr,
               const runtime::TensorView* workspace = nullptr);
  // execute() on tensors of the construction's shapes, strides and device at
  // these data addresses (Q, k_cache, v_cache, block_table, kv_lens, O, lse:
  // 0 where built without one) and the workspace's (0: the op's own): no
  // views made or compared, for callers that hold the descriptions (the
  // Python paths' per-call host time).
  void execute_at(const std::array<runtime::DevicePtr, 7>& addresses, runtime::DevicePtr workspace = 0,
                  runtime::Stream* stream = nullptr);

 private:
  void launch(const std::array<runtime::DevicePtr, 7>& addresses, runtime::DevicePtr workspace,
              runtime::Stream* stream);
  struct State;
  std::unique_ptr<State> state_;
};

// One-shot: construct, compile and execute; waits for the stream where there
// are several splits (it frees the workspace of their partials on return).
void attention_decode(const AttentionDecodeTensors& tensors, AttentionDecodeOptions options = {},
                      runtime::Stream* stream = nullptr);

}  // namespace warpforge::ops
