// The SwiGLU kernels, on the row kernel skeleton (rows/row_kernel.hpp),
// element-wise (no reduction): each thread loads its vectors of gate and up
// (or of the interleaved x, two elements a row element), computes and stores.
//   forward:  out = silu(g) · u. Parameters: gate, up (or x), out (u64), rows (u32).
//   backward: dgate, dup (or dx). Parameters: dout, gate, up (or x), dgate,
//             dup (or dx) (u64), rows (u32).
// σ(g) = rcp.approx(1 + ex2.approx(-g · log2 e)) (PTX ISA 9.7.3.16, 9.7.3.21).
#pragma once

#include <cstdint>

#include "../rows/row_shape.hpp"
#include "../rows/row_views.hpp"
#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::ops {

struct SwigluProblem {
  bool backward = false;
  bool interleaved = false;  // x (and dx) rather than gate and up (dgate and dup)
  std::int64_t rows = 0, n = 0;
  rows::RowMatrix gate, up, x, out;  // out: the forward's out; the backward's dout
  rows::RowMatrix dgate, dup, dx;
  rows::RowShape shape;
};

inline constexpr const char* kSwigluKernel = "warpforge_swiglu";
inline constexpr const char* kSwigluBackwardKernel = "warpforge_swiglu_backward";

ptx::Module build_swiglu_kernel(const SwigluProblem& problem, ptx::Target target);

}  // namespace warpforge::ops
