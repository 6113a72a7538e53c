// What a GEMM kernel is specialised for: the problem without its data.
// Built by ops/gemm.cpp from the TensorViews; every kernel path (sm80,
// sm90a) reads only this.
#pragma once

#include <cstdint>
#include <string>

#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

// One matrix operand of the problem as the kernel sees it: `contiguous_inner`
// says whether the second logical index (K for A, N for B, N for C/D) is the
// contiguous one (row-major); `ld` is the stride in elements between
// consecutive values of the other index; `batch_stride` between batches.
struct MatrixLayout {
  bool row_major = true;
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;
  int base_alignment = 16;  // bytes: the largest power of two (<= 16) dividing the base address
  friend bool operator==(const MatrixLayout&, const MatrixLayout&) = default;
};

struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0, l = 1;
  runtime::DType ab_dtype = runtime::DType::bf16;  // A and B (bf16 or f16)
  runtime::DType d_dtype = runtime::DType::f32;    // C and D
  MatrixLayout a, b, d;
  bool has_c = false;  // beta != 0 and a C was given
  MatrixLayout c;      // meaningful when has_c
  // Fold max |D| (before D's conversion) into an f32 (GemmOperands::amax):
  // not on ops::Gemm's API; the block-scaled op's pre-pass path uses it.
  bool amax = false;
  std::string describe() const;  // "1024x512x256 L1 bf16->f32 A row B col D row"
  friend bool operator==(const GemmProblem&, const GemmProblem&) = default;
};

}  // namespace warpforge::ops
