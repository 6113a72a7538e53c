// What an attention kernel is specialised for and launched with: the
// problem without its data, read off the views by attention_problem.cpp with
// every reason it cannot run. The kernels read only this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "warpforge/ops/attention.hpp"
#include "warpforge/runtime/dtype.hpp"
#include "warpforge/runtime/stream.hpp"

namespace warpforge::ops {

// One (batch, head, row, head_dim) tensor as the kernels address it:
// element (b, h, i, d) at b·batch + h·head + i·row + d (elements). Varlen
// tensors have batch = 0 and rows counted from the sequence's cu_seqlens.
struct AttentionStrides {
  std::int64_t batch = 0, head = 0, row = 0;
  friend bool operator==(const AttentionStrides&, const AttentionStrides&) = default;
};

struct AttentionProblem {
  runtime::DType dtype = runtime::DType::bf16;
  std::int64_t batch = 0, heads_q = 0, heads_kv = 0, head_dim = 0;
  // Dense: every sequence's lengths. Varlen: the bounds max_seqlen_q/_k.
  std::int64_t seq_q = 0, seq_k = 0;
  bool varlen = false;
  std::int64_t total_q = 0, total_k = 0;  // varlen: rows of Q and K
  AttentionStrides q, k, v, o;
  bool has_lse = false;
  AttentionStrides lse;  // its d stride is meaningless (one value a row)
  // The backward's tensors (zero in a forward problem): dO like O, dQ like
  // Q, dK and dV like K and V.
  AttentionStrides d_o, dq, dk, dv;
  double scale = 1.0;
  std::int64_t window_left = -1, window_right = -1;
  bool top_left = false;     // MaskAlignment::top_left
  bool deterministic = false;

  std::int64_t group() const { return heads_q / heads_kv; }
  // scale·log2(e): the kernels' softmax is exp2(S·scale_log2 - max·scale_log2).
  float scale_log2() const;
  // Key j is visible from row i of a sequence of these lengths (the mask of
  // attention.hpp, in one place for the reference and the kernels' tests).
  bool visible(std::int64_t i, std::int64_t j, std::int64_t len_q, std::int64_t len_k) const;
  // The mask's diagonal offset for a sequence of these lengths.
  std::int64_t diagonal(std::int64_t len_q, std::int64_t len_k) const {
    return top_left ? 0 : len_k - len_q;
  }
  // "bf16 b2 hq8 hkv2 sq300 sk300 d128 causal window(-1,0) scale 0.0884"
  std::string describe() const;
  friend bool operator==(const AttentionProblem&, const AttentionProblem&) = default;
};

// A kernel specialisation's mask and layout flags, from the problem (each
// attention kernel's spec has these four fields).
template <class Spec>
void take_mask_flags(Spec& s, const AttentionProblem& p) {
  s.varlen = p.varlen;
  s.window_left = p.window_left >= 0;
  s.window_right = p.window_right >= 0;
  s.top_left = p.top_left;
}

// The one-shot forms (attention(), attention_backward(), attention_decode()):
// build the op, execute it on `stream` (nullptr: the device's), and wait
// for that stream where the op made a workspace, which it frees on return.
template <class Op, class Tensors, class Options>
void execute_once(const Tensors& t, const Options& options, runtime::Stream* stream) {
  Op op(t, options);
  op.execute(t, stream);
  if (op.workspace_bytes() == 0) return;
  if (stream)
    stream->synchronize();
  else
    t.q.device().synchronize();
}

// Reasons as the ops' messages list them: "\n  - reason" each.
std::string join_reasons(const std::vector<std::string>& reasons);

// The problem of a forward pass; every refusal appended to `why`.
AttentionProblem attention_problem(const AttentionTensors& t, const AttentionOptions& options,
                                   std::vector<std::string>& why);
// The problem of a backward pass.
AttentionProblem attention_backward_problem(const AttentionBackwardTensors& t,
                                            const AttentionOptions& options,
                                            std::vector<std::string>& why);

}  // namespace warpforge::ops
