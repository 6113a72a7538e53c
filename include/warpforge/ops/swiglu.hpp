// SwiGLU, the gated activation between a transformer MLP's two GEMMs,
// forward and backward:
//
//   out = silu(gate) · up,  silu(g) = g · σ(g),  σ(g) = 1 / (1 + exp(-g))
//   dgate = dout · up · σ(g) · (1 + g · (1 - σ(g))),  dup = dout · silu(g)
//
//   ops::Swiglu op({.gate = g, .up = u, .out = o});        // two tensors
//   ops::Swiglu op({.x = gu, .out = o});                    // one, interleaved
//   op.execute({.gate = g, .up = u, .out = o}, &stream);
//
// gate, up, out: (..., n) of f32, f16 or bf16, the last dimension contiguous
// and the leading ones collapsing into one row stride (so the two halves of
// one (..., 2n) tensor, as a fused gate-up projection writes it, are two
// views of row stride 2n); or x: (..., 2n) interleaved, gate at the even
// positions and up at the odd ones. The backward writes dgate and dup, or
// dx interleaved as x. Element-wise: each input read once, each output
// written once, 16-byte accesses; exp and the reciprocal are the .approx
// instructions (about 2 ulp). Special values as PyTorch's silu(g) · up:
// silu(-inf) is NaN (-inf · 0), silu(+inf) = +inf.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

struct SwigluTensors {
  std::optional<runtime::TensorView> gate, up;  // (..., n), or:
  std::optional<runtime::TensorView> x;         // (..., 2n) interleaved
  runtime::TensorView out;                      // (..., n)
};

class Swiglu {
 public:
  explicit Swiglu(const SwigluTensors& tensors);
  ~Swiglu();
  Swiglu(Swiglu&&) noexcept;
  Swiglu& operator=(Swiglu&&) noexcept;

  std::vector<std::string> check_support() const;
  std::string_view kernel_name() const;  // "warp" or "cta": the threads of one row
  std::string describe() const;
  std::size_t workspace_bytes() const { return 0; }
  void compile();
  void execute(const SwigluTensors& tensors, runtime::Stream* stream = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct SwigluBackwardTensors {
  runtime::TensorView dout;                          // (..., n)
  std::optional<runtime::TensorView> gate, up, x;    // as the forward's
  std::optional<runtime::TensorView> dgate, dup, dx;  // dgate and dup with gate and up; dx with x
};

class SwigluBackward {
 public:
  explicit SwigluBackward(const SwigluBackwardTensors& tensors);
  ~SwigluBackward();
  SwigluBackward(SwigluBackward&&) noexcept;
  SwigluBackward& operator=(SwigluBackward&&) noexcept;

  std::vector<std::string> check_support() const;
  std::string_view kernel_name() const;
  std::string describe() const;
  std::size_t workspace_bytes() const { return 0; }
  void compile();
  void execute(const SwigluBackwardTensors& tensors, runtime::Stream* stream = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One-shot: out of gate's dtype and shape (contiguous), after waiting for `stream`.
runtime::Tensor swiglu(const runtime::TensorView& gate, const runtime::TensorView& up,
                       runtime::Stream* stream = nullptr);

}  // namespace warpforge::ops
