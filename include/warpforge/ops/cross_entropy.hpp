// Cross-entropy over a large vocabulary, with label smoothing and an ignore
// index, the loss and its gradient in one pass over the logits:
//
//   lse_i  = log Σ_j exp(x_ij)                                 (online: rows/online_softmax.hpp)
//   loss_i = lse_i - (1 - ε) x_i,y_i - (ε / V) Σ_j x_ij         (0 where y_i is the ignore index)
//   dx_ij  = s · (softmax(x_i)_j - (1 - ε)[j = y_i] - ε / V)    (0 on ignored rows)
//   loss   = Σ_i loss_i / (valid rows) (mean), Σ_i loss_i (sum), or loss_i (none);
//   s = 1 / (valid rows) (mean) or 1: the gradient of the loss for dloss = 1
//
//   ops::CrossEntropy op({.logits = x, .labels = y, .loss = l, .dlogits = dx}, {.label_smoothing = 0.1f});
//   op.execute({...}, &stream);               // loss and gradient, logits read once
//   ops::CrossEntropyScale back({.dlogits = dx, .dloss = g});  // the backward: dx *= dloss
//
// logits (..., V): f32, f16 or bf16, the last dimension contiguous (V up to
// 262144 held in registers of a cluster; longer rows read twice); labels:
// i64 or i32, one a row; loss: f32 (rows) for none, f32 (1) for mean and sum;
// lse: optional f32 (rows); dlogits: optional, like logits (any float dtype),
// and may be the logits themselves (in place: each thread reads its
// elements before writing them, the target logit comes through the
// reduction). The gradient written is for dloss = 1: CrossEntropyScale
// multiplies it by dloss afterwards, skipping the rows whose dloss is 1 (so
// the usual loss.backward() moves no more bytes). Memory: the logits, their
// gradient and workspace_bytes() (a few bytes a row group).
//
// A label outside [0, V) that is not the ignore index gives a NaN loss and a
// NaN gradient row (PyTorch raises a device assert). NaN and infinity as
// PyTorch: a NaN or +inf logit makes the row's loss NaN; a target logit of
// -inf makes it +inf.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

enum class LossReduction { none, mean, sum };
std::string_view name(LossReduction r);  // "none", "mean", "sum"
std::optional<LossReduction> parse_loss_reduction(std::string_view text);

struct CrossEntropyOptions {
  std::int64_t ignore_index = -100;
  float label_smoothing = 0.0f;  // ε in [0, 1]
  LossReduction reduction = LossReduction::mean;
  // false: compile() allocates the workspace; true: every execute() brings one.
  bool caller_workspace = false;
};

struct CrossEntropyTensors {
  runtime::TensorView logits;                   // (..., V)
  runtime::TensorView labels;                   // (...): i64 or i32
  runtime::TensorView loss;                     // f32: (rows) for none, one element otherwise
  std::optional<runtime::TensorView> lse;       // f32 (rows)
  std::optional<runtime::TensorView> dlogits;   // like logits; may be the logits (in place)
};

class CrossEntropy {
 public:
  CrossEntropy(const CrossEntropyTensors& tensors, CrossEntropyOptions options = {});
  ~CrossEntropy();
  CrossEntropy(CrossEntropy&&) noexcept;
  CrossEntropy& operator=(CrossEntropy&&) noexcept;

  std::vector<std::string> check_support() const;
  std::string_view kernel_name() const;  // "warp", "cta" or "cluster": what one row spans
  std::string describe() const;
  // The valid-label counts and the row groups' loss sums (mean and sum): a
  // few kilobytes, whatever the vocabulary.
  std::size_t workspace_bytes() const;
  void compile();
  // workspace: contiguous, at least workspace_bytes() on the op's device, no
  // contents needed; absent, the op's own. Allocates nothing, never waits.
  void execute(const CrossEntropyTensors& tensors, runtime::Stream* stream = nullptr,
               const runtime::TensorView* workspace = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct CrossEntropyScaleTensors {
  runtime::TensorView dlogits;  // (..., V), the forward's gradient, scaled in place
  runtime::TensorView dloss;    // f32: one element (mean, sum) or one a row (none)
};

// dlogits *= dloss, a row at a time; a row whose dloss is exactly 1 is not
// touched (no memory traffic).
class CrossEntropyScale {
 public:
  explicit CrossEntropyScale(const CrossEntropyScaleTensors& tensors);
  ~CrossEntropyScale();
  CrossEntropyScale(CrossEntropyScale&&) noexcept;
  CrossEntropyScale& operator=(CrossEntropyScale&&) noexcept;

  std::vector<std::string> check_support() const;
  std::string_view kernel_name() const;
  std::string describe() const;
  std::size_t workspace_bytes() const { return 0; }
  void compile();
  void execute(const CrossEntropyScaleTensors& tensors, runtime::Stream* stream = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace warpforge::ops
