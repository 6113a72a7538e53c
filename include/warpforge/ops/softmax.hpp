// Softmax over the last dimension, forward and backward:
//
//   y = exp(x - max(x)) / Σ exp(x - max(x))        dx = y · (dy - Σ dy·y)
//
//   runtime::Tensor y = ops::softmax(x);             // one call: allocates y
//   ops::Softmax op(x, y);  op.execute(x, y, &stream);
//   ops::SoftmaxBackward back(y, dy, dx);  back.execute(y, dy, dx, &stream);
//
// x, y, dy, dx: (..., n) of f32, f16 or bf16 (each its own), the last
// dimension contiguous and the leading ones collapsing into one row stride;
// any n >= 1. The kernels hold a row in registers, of a warp, a CTA, or a
// cluster of up to 8 CTAs (sm_90+; distributed shared memory), so each input
// is read once, up to 262144 elements forward and 131072 backward (bf16;
// f32 the same); longer rows are read in passes, each input twice. The
// maximum and the sum come from one reduction (the online softmax:
// rows/online_softmax.hpp);
// the backward's Σ dy·y is overflow-safe (rows/scaled_sum.hpp). Special values
// as PyTorch: a NaN or +inf in a row makes it NaN, so does a row of -inf.
// Exponentials are ex2.approx (about 2 ulp): f32 outputs carry about 2^-21
// relative error beside the rounding.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

class Softmax {
 public:
  Softmax(const runtime::TensorView& x, const runtime::TensorView& y);
  ~Softmax();
  Softmax(Softmax&&) noexcept;
  Softmax& operator=(Softmax&&) noexcept;

  std::vector<std::string> check_support() const;
  std::string_view kernel_name() const;  // "warp", "cta" or "cluster": what one row spans
  std::string describe() const;
  std::size_t workspace_bytes() const { return 0; }
  void compile();
  // Views of the construction's description; allocates nothing, never waits.
  void execute(const runtime::TensorView& x, const runtime::TensorView& y, runtime::Stream* stream = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

class SoftmaxBackward {
 public:
  SoftmaxBackward(const runtime::TensorView& y, const runtime::TensorView& dy, const runtime::TensorView& dx);
  ~SoftmaxBackward();
  SoftmaxBackward(SoftmaxBackward&&) noexcept;
  SoftmaxBackward& operator=(SoftmaxBackward&&) noexcept;

  std::vector<std::string> check_support() const;
  std::string_view kernel_name() const;
  std::string describe() const;
  std::size_t workspace_bytes() const { return 0; }
  void compile();
  void execute(const runtime::TensorView& y, const runtime::TensorView& dy, const runtime::TensorView& dx,
               runtime::Stream* stream = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One-shot: y of x's dtype and shape (contiguous), after waiting for `stream`.
runtime::Tensor softmax(const runtime::TensorView& x, runtime::Stream* stream = nullptr);

}  // namespace warpforge::ops
