// RMSNorm and LayerNorm over the last dimension, forward and backward, with
// an optional residual added first (the sum returned for the next layer):
//
//   h = x + residual                      (rounded to residual_out's dtype; h = x without residual)
//   rms:   y = h · rstd · weight,          rstd = 1 / sqrt(mean(h²) + eps)
//   layer: y = (h - mean) · rstd · weight + bias,  rstd = 1 / sqrt(var(h) + eps)
//
//   auto r = ops::rms_norm(x, &w, 1e-6f);                  // one call: allocates y and rstd
//   ops::Norm op({.x = x, .weight = w, .y = y, .rstd = rstd}, {.kind = NormKind::rms});
//   op.execute({.x = x, .weight = w, .y = y, .rstd = rstd}, &stream);
//   ops::NormBackward back({.dy = dy, .x = x, .weight = w, .rstd = rstd, .dx = dx, .dweight = dw});
//
// Tensors (TensorViews, strides in elements): x, residual, y, residual_out,
// dy, dx: (..., n) of f32, f16 or bf16 with the last dimension contiguous
// and the leading ones collapsing into one row stride (any row stride: rows
// may be views into wider rows); weight, bias, dweight, dbias: (n),
// contiguous, f32, f16 or bf16; mean, rstd: f32 with one element a row.
// Statistics are f32; each output is rounded once, to nearest even.
//
// Numerics: sums are taken in f32 with a per-thread power-of-two scaling
// (rows whose values reach the dtype's largest do not overflow; docs in
// src/ops/rows/scaled_sum.hpp), and layer norm subtracts the row's first
// element before summing (an all-equal row normalizes to exactly 0: y =
// bias). NaN and infinity propagate as PyTorch's: a NaN makes its row NaN;
// an infinity makes rstd 0 (rms: finite elements 0, infinite ones NaN; layer:
// the row NaN). The backward's dweight and dbias are summed over rows in a
// fixed order (deterministic): each group of threads adds its rows in f32
// registers, then a second kernel adds the groups' sums from the workspace.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

enum class NormKind { rms, layer };
std::string_view name(NormKind kind);  // "rms", "layer"

struct NormOptions {
  NormKind kind = NormKind::rms;
  float eps = 1e-6f;  // added to the mean square (rms) or the variance (layer)
  // NormBackward: false (the default), compile() allocates the workspace;
  // true, it allocates none and every execute() brings one.
  bool caller_workspace = false;
};

struct NormTensors {
  runtime::TensorView x;                           // (..., n)
  std::optional<runtime::TensorView> residual;     // like x: h = x + residual
  std::optional<runtime::TensorView> weight;       // (n); absent: 1
  std::optional<runtime::TensorView> bias;         // (n), layer only; absent: 0
  runtime::TensorView y;                           // like x
  std::optional<runtime::TensorView> residual_out;  // like x: h, as the norm read it (needed with residual)
  std::optional<runtime::TensorView> mean;          // f32 a row (layer only): for the backward
  std::optional<runtime::TensorView> rstd;          // f32 a row: for the backward
};

// The forward. The kernels are a family chosen by the row's length: a row
// a warp (several rows a CTA), a row a CTA of up to 1024 threads, or a row a
// cluster of up to 8 CTAs (distributed shared memory, sm_90+).
class Norm {
 public:
  Norm(const NormTensors& tensors, NormOptions options = {});
  ~Norm();
  Norm(Norm&&) noexcept;
  Norm& operator=(Norm&&) noexcept;

  // Every reason it cannot run; empty when it can.
  std::vector<std::string> check_support() const;
  // "warp", "cta" or "cluster": what one row spans.
  std::string_view kernel_name() const;
  // The problem, the kernel's launch shape, and why narrower spans were not taken.
  std::string describe() const;
  std::size_t workspace_bytes() const { return 0; }
  // Builds the kernel (JIT, cached). Throws OpsError listing check_support()'s reasons.
  void compile();
  // Runs on `stream` (the null stream when absent); compiles first if needed.
  // The views must match the construction's (dtype, shape, strides, device,
  // the presence of each optional tensor, base addresses at least as aligned).
  // Once compiled it allocates nothing and never waits: CUDA-graph safe.
  void execute(const NormTensors& tensors, runtime::Stream* stream = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct NormBackwardTensors {
  runtime::TensorView dy;                            // (..., n): the gradient of y
  runtime::TensorView x;                             // the forward's h (x, or residual_out)
  std::optional<runtime::TensorView> weight;         // as in the forward
  std::optional<runtime::TensorView> mean;           // layer: the forward's
  runtime::TensorView rstd;                          // the forward's
  std::optional<runtime::TensorView> dresidual_out;  // the gradient reaching h besides y's (added to dx)
  runtime::TensorView dx;                            // the gradient of h (of x and of residual)
  std::optional<runtime::TensorView> dweight;        // (n): Σ over rows of dy · (h - mean) · rstd (needs weight)
  std::optional<runtime::TensorView> dbias;          // (n), layer: Σ over rows of dy
};

// The backward: dx by the same family of row kernels (each row group adds
// its rows' contributions to dweight and dbias in registers), then, with
// dweight or dbias, a kernel adding the groups' sums (from the workspace).
class NormBackward {
 public:
  NormBackward(const NormBackwardTensors& tensors, NormOptions options = {});
  ~NormBackward();
  NormBackward(NormBackward&&) noexcept;
  NormBackward& operator=(NormBackward&&) noexcept;

  std::vector<std::string> check_support() const;
  std::string_view kernel_name() const;
  std::string describe() const;
  // The row groups' f32 sums of dweight and dbias: groups x n x 4 bytes
  // each (0 without dweight and dbias). compile() allocates it unless
  // options.caller_workspace.
  std::size_t workspace_bytes() const;
  void compile();
  // workspace: a contiguous buffer of at least workspace_bytes() on the op's
  // device (no initial contents needed); absent, the op's own. Runs sharing
  // a workspace must not overlap (one stream).
  void execute(const NormBackwardTensors& tensors, runtime::Stream* stream = nullptr,
               const runtime::TensorView* workspace = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct NormResult {
  runtime::Tensor y;
  std::optional<runtime::Tensor> residual_out;  // with a residual
  std::optional<runtime::Tensor> mean;          // layer
  runtime::Tensor rstd;
};

// One-shot forms: allocate y (x's dtype and shape, contiguous), h (with a
// residual), the statistics, run on `stream`, wait for it.
NormResult rms_norm(const runtime::TensorView& x, const runtime::TensorView* weight, float eps = 1e-6f,
                    const runtime::TensorView* residual = nullptr, runtime::Stream* stream = nullptr);
NormResult layer_norm(const runtime::TensorView& x, const runtime::TensorView* weight,
                      const runtime::TensorView* bias, float eps = 1e-5f,
                      const runtime::TensorView* residual = nullptr, runtime::Stream* stream = nullptr);

}  // namespace warpforge::ops
