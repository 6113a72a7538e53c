// The CPU reference of block-scaled GEMM + amax (gemm_amax.hpp): each product
// (A·SFA)(B·SFB) decoded exactly and summed in double, the sum rounded once to
// f32 (the "f32 accumulator"); amax = max |acc| over every m, n, l, NaN when
// any accumulator is NaN (a NaN is never dropped, unlike fmax).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

// One block-scaled operand in host memory, laid out as its TensorView: A
// (rows = M) or B (rows = N), element (r, k, l) at r·stride_row + k·stride_k +
// l·stride_batch elements (e2m1: nibbles, low nibble first); scales in the
// 128×4 layout (scale_factor_layout.hpp) for (rows, K, batches, vec).
struct BlockScaledOperand {
  runtime::DType dtype = runtime::DType::e4m3;  // e4m3, e5m2, e2m1
  std::int64_t rows = 0, k = 0, batches = 1;
  std::int64_t stride_row = 0, stride_k = 1, stride_batch = 0;
  std::span<const std::uint8_t> data;
  runtime::DType scale_dtype = runtime::DType::e8m0;  // e8m0, e4m3
  int vec = 32;
  std::span<const std::uint8_t> scales;

  float value(std::int64_t r, std::int64_t kk, std::int64_t l) const;  // data × its block's scale
  // Every value(), (l, row, k) with k fastest.
  std::vector<double> values() const;
};

struct GemmAmaxReference {
  std::int64_t m = 0, n = 0, l = 0;
  std::vector<float> acc;  // (l, m, n), n fastest
  float amax = 0.0f;
  float at(std::int64_t i, std::int64_t j, std::int64_t batch) const {
    return acc[static_cast<std::size_t>((batch * m + i) * n + j)];
  }
};

// Throws OpsError when A and B disagree on K or L.
GemmAmaxReference gemm_amax_reference(const BlockScaledOperand& a, const BlockScaledOperand& b);

}  // namespace warpforge::ops
