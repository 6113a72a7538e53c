// Attention on tensor cores (FlashAttention's algorithm: the scores never
// leave the chip):
//
//   O = softmax(Q·Kᵀ·scale + mask)·V,   lse = log Σ_j exp(Q·Kᵀ·scale + mask)   (per query row)
//
//   ops::attention({.q = q, .k = k, .v = v, .o = o, .lse = &lse}, {.causal = true});
//   ops::Attention op({.q = q, .k = k, .v = v, .o = o}, options);
//   for (auto& why : op.check_support()) std::cout << why << "\n";
//   std::cout << op.describe();  op.execute({.q = q, .k = k, .v = v, .o = o}, &stream);
//   ops::AttentionBackward bwd({... q, k, v, o, lse, d_o, dq, dk, dv}, options);
//
// Tensors (runtime::TensorView, strides in elements, head_dim of stride 1):
//  - dense: Q and O (batch, heads_q, seq_q, head_dim); K and V (batch,
//    heads_kv, seq_k, head_dim); the memory order is the strides', so a
//    (batch, seq, heads, head_dim) tensor is passed as its transposed view.
//    lse (batch, heads_q, seq_q), f32.
//  - varlen (cu_seqlens_q and cu_seqlens_k given, as FlashAttention's varlen
//    API takes them): Q and O (total_q, heads_q, head_dim), K and V (total_k,
//    heads_kv, head_dim); sequence b holds rows cu_seqlens[b] ..
//    cu_seqlens[b+1] - 1; cu_seqlens are i32 of batch + 1 values on the
//    device, read by the kernels (never by the host); lse (heads_q, total_q).
//    max_seqlen_q and max_seqlen_k bound the lengths (they size the grid): a
//    longer sequence is the caller's error, and its rows past max_seqlen_q
//    are left unwritten.
//  - Q, K, V, O (and dO, dQ, dK, dV) bf16 or f16, all of one dtype; head_dim
//    64, 128 or 256; heads_kv divides heads_q (grouped-query attention: query
//    head h reads KV head h / (heads_q / heads_kv); multi-query at heads_kv =
//    1); every stride but head_dim's a multiple of 8 elements and every base
//    address 16-byte aligned (the kernels move 16-byte pieces).
//
// The mask. Key j is visible from query row i of a sequence of seq_q
// queries and seq_k keys when j < seq_k, j <= i + offset + window_right
// (window_right >= 0) and j >= i + offset - window_left (window_left >= 0),
// where offset = seq_k - seq_q (bottom-right alignment, FlashAttention's:
// the last query sees the last key, which is what decoding after a KV cache
// needs) or 0 (top-left, PyTorch's is_causal). causal is window_right = 0.
// A row that sees no key (a sliding window past the keys) has O = 0 and
// lse = -inf, and gradients 0.
//
// Accuracy (attention_reference.hpp derives the bound every test checks):
// products exact, sums in f32, P rounded to the input dtype once before P·V
// (FlashAttention's scheme), O rounded once.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// Which kernel runs the prefill forward and backward: sm90a (the forward on
// the warp-specialized template: TMA, wgmma, two consumer warpgroups in
// ping-pong; sm_90a devices and the simulator), sm80 (cp.async + ldmatrix +
// mma.sync; runs on every device warpforge runs, and the backward), or
// automatic (the first of these the device and problem take).
enum class AttentionKernel { automatic, sm90a, sm80 };
std::string_view name(AttentionKernel kernel);  // "automatic", "sm90a", "sm80"
// Inverse of name(), also taking "auto"; nullopt for anything else.
std::optional<AttentionKernel> parse_attention_kernel(std::string_view text);

enum class MaskAlignment { bottom_right, top_left };

struct AttentionOptions {
  // Multiplies Q·Kᵀ before the softmax; absent: 1/sqrt(head_dim). Must be
  // finite and > 0 (the kernels fold it into exp2's argument after the row
  // maximum, which a negative scale would turn into a minimum).
  std::optional<double> scale;
  bool causal = false;              // window_right = 0
  std::int64_t window_left = -1;    // keys visible left of the diagonal; -1: all
  std::int64_t window_right = -1;   // keys visible right of the diagonal; -1: all
  MaskAlignment alignment = MaskAlignment::bottom_right;
  std::int64_t max_seqlen_q = 0, max_seqlen_k = 0;  // varlen only (> 0)
  // Backward: dK and dV are always summed in a fixed order; dQ is summed
  // with f32 atomics across the KV blocks unless deterministic, which
  // computes it in a pass of its own whose sums run in a fixed order (the
  // same bits every run, at the cost of recomputing the scores once more).
  bool deterministic = false;
  AttentionKernel kernel = AttentionKernel::automatic;
  // false: compile() allocates the workspace (workspace_bytes()); true:
  // execute() is given one.
  bool caller_workspace = false;
};

struct AttentionTensors {
  const runtime::TensorView& q;
  const runtime::TensorView& k;
  const runtime::TensorView& v;
  const runtime::TensorView& o;                     // written
  const runtime::TensorView* lse = nullptr;         // written when given
  const runtime::TensorView* cu_seqlens_q = nullptr;
  const runtime::TensorView* cu_seqlens_k = nullptr;
};

struct AttentionBackwardTensors {
  const runtime::TensorView& q;
  const runtime::TensorView& k;
  const runtime::TensorView& v;
  const runtime::TensorView& o;    // the forward's output
  const runtime::TensorView& lse;  // the forward's log-sum-exp
  const runtime::TensorView& d_o;  // dL/dO, like O
  const runtime::TensorView& dq;   // written, like Q
  const runtime::TensorView& dk;   // written, like K
  const runtime::TensorView& dv;   // written, like V
  const runtime::TensorView* cu_seqlens_q = nullptr;
  const runtime::TensorView* cu_seqlens_k = nullptr;
};

// The forward pass.
class Attention {
 public:
  // The views fix the problem (shapes, strides, dtypes, device); execute()
  // may be given other views of the same description (other data).
  Attention(const AttentionTensors& tensors, AttentionOptions options = {});
  ~Attention();
  Attention(Attention&&) noexcept;
  Attention& operator=(Attention&&) noexcept;

  // Every reason the problem cannot run, each naming the value, the rule and
  // what would be accepted; empty when it can.
  std::vector<std::string> check_support() const;
  // The problem, the kernel chosen with its configuration, and why each
  // kernel ahead of it was not taken.
  std::string describe() const;
  std::size_t workspace_bytes() const;  // none for the forward kernels
  // Builds the kernel (JIT, cached). Throws OpsError listing check_support().
  void compile();
  // Runs on `stream` (the null stream when absent); compiles first if needed.
  // Allocates nothing and never waits for the device once compiled (CUDA-graph
  // safe). Throws OpsError when a view differs from the construction's.
  void execute(const AttentionTensors& tensors, runtime::Stream* stream = nullptr);
  // execute() on tensors of the construction's shapes, strides and device at
  // these data addresses (Q, K, V, O, lse, cu_seqlens_q, cu_seqlens_k: 0
  // where built without one): no views made or compared, for callers that
  // hold the descriptions (the Python paths' per-call host time). The
  // launch is kept between calls: the arguments are packed once, and the
  // TMA maps are kept by the tensors' addresses.
  void execute_at(const std::array<runtime::DevicePtr, 7>& addresses, runtime::Stream* stream = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The backward pass: dQ, dK, dV from O, dO and lse.
class AttentionBackward {
 public:
  AttentionBackward(const AttentionBackwardTensors& tensors, AttentionOptions options = {});
  ~AttentionBackward();
  AttentionBackward(AttentionBackward&&) noexcept;
  AttentionBackward& operator=(AttentionBackward&&) noexcept;

  std::vector<std::string> check_support() const;
  std::string describe() const;
  // f32 row sums D = rowsum(dO∘O), and (unless deterministic) the f32 dQ
  // accumulator the KV blocks add into.
  std::size_t workspace_bytes() const;
  void compile();
  // workspace: contiguous, 16-byte aligned, workspace_bytes() or more, on the
  // op's device (needed with caller_workspace; else the op's own is used).
  // Runs sharing a workspace must not overlap: run them on one stream.
  void execute(const AttentionBackwardTensors& tensors, runtime::Stream* stream = nullptr,
               const runtime::TensorView* workspace = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One-shot forms: construct, compile and execute; each waits for the stream
// only where the op made a workspace (which it frees on return): the
// backward always, the forward kernels never.
void attention(const AttentionTensors& tensors, AttentionOptions options = {},
               runtime::Stream* stream = nullptr);
void attention_backward(const AttentionBackwardTensors& tensors, AttentionOptions options = {},
                        runtime::Stream* stream = nullptr);

}  // namespace warpforge::ops
