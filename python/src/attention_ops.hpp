// The attention ops the extension hands out: ops::Attention,
// ops::AttentionBackward and ops::AttentionDecode with the option values the
// package passes, and the one cache of compiled ops that warpforge.attention,
// the torch operators and the XLA FFI handlers share.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "warpforge/ops/attention.hpp"
#include "warpforge/ops/attention_decode.hpp"

namespace warpforge::python {

// The tensors of one call, as views (absent ones empty).
struct AttentionViews {
  // Forward: q, k, v, o, lse. Backward: q, k, v, o, lse, d_o, dq, dk, dv.
  std::vector<runtime::TensorView> main;
  std::optional<runtime::TensorView> cu_seqlens_q, cu_seqlens_k;
  bool has_lse = true;  // the forward's lse (main[4]) is given
};

// The options from the package's values: scale absent or > 0; windows -1 or
// >= 0; kernel "auto" or "sm80".
ops::AttentionOptions attention_options(std::optional<double> scale, bool causal, std::int64_t window_left,
                                        std::int64_t window_right, bool top_left, std::int64_t max_seqlen_q,
                                        std::int64_t max_seqlen_k, bool deterministic, const std::string& kernel,
                                        bool caller_workspace);

class AttentionOp {
 public:
  AttentionOp(const AttentionViews& samples, const ops::AttentionOptions& options, bool backward);
  std::vector<std::string> check_support() const;
  std::string describe() const;
  std::size_t workspace_bytes() const;
  void compile();
  // workspace: the caller's (an op built with caller_workspace), else null.
  void run(const AttentionViews& views, runtime::Stream* stream, const runtime::TensorView* workspace);
  // run() on the samples' descriptions at other data addresses (main's
  // order, then cu_seqlens_q and cu_seqlens_k: 0 where absent; workspace 0:
  // none), with no DLPack exchange.
  void run_at(const std::vector<std::uint64_t>& main, std::uint64_t cu_q, std::uint64_t cu_k,
              std::uint64_t workspace, runtime::Stream* stream);
  const runtime::Device& device() const { return samples_.main.at(0).device(); }

 private:
  AttentionViews samples_;
  std::optional<ops::Attention> forward_;
  std::optional<ops::AttentionBackward> backward_;
  std::mutex run_mutex_;  // runs of one op share its workspace
};

class AttentionDecodeOp {
 public:
  // Views in the order q, k_cache, v_cache, block_table, kv_lens, o, lse (lse may be absent).
  AttentionDecodeOp(const std::vector<runtime::TensorView>& samples, const ops::AttentionDecodeOptions& options);
  std::vector<std::string> check_support() const { return op_.check_support(); }
  std::string describe() const { return op_.describe(); }
  std::size_t workspace_bytes() const { return op_.workspace_bytes(); }
  void compile() { op_.compile(); }
  void run(const std::vector<runtime::TensorView>& views, runtime::Stream* stream,
           const runtime::TensorView* workspace);
  // run() on the samples' descriptions at other data addresses (one per
  // sample, in their order; workspace 0: none), with no DLPack exchange: the
  // torch path's per-call cost.
  void run_at(const std::vector<std::uint64_t>& addresses, std::uint64_t workspace, runtime::Stream* stream);
  const runtime::Device& device() const { return samples_.at(0).device(); }

 private:
  std::vector<runtime::TensorView> samples_;
  ops::AttentionDecode op_;
  std::mutex run_mutex_;
};

// The compiled op for these views and options, made once and kept.
std::shared_ptr<AttentionOp> cached_attention_op(const AttentionViews& views, const ops::AttentionOptions& options,
                                                 bool backward);
std::shared_ptr<AttentionDecodeOp> cached_attention_decode_op(const std::vector<runtime::TensorView>& views,
                                                              const ops::AttentionDecodeOptions& options);

}  // namespace warpforge::python
