// The GEMM's CPU reference, in fp64, for tests, the CLI's --check and the
// benchmark: operands as host copies of strided device tensors.
//
//   auto a = HostTensor::download(view_a);               // bytes + description
//   std::vector<double> want = gemm_reference(a, b, nullptr, 1.0, 0.0);  // (L, M, N) row-major
#pragma once

#include <cstdint>
#include <vector>

#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// A tensor's memory on the host, from its first element to its last, with
// the view's dtype, shape and strides (elements). Supports f32, f16, bf16.
struct HostTensor {
  runtime::DType dtype = runtime::DType::f32;
  std::vector<std::int64_t> shape, strides;
  std::vector<std::uint8_t> bytes;

  static HostTensor download(const runtime::TensorView& view);
  // Writes `bytes` back over the view's memory (the same span download read).
  void upload(const runtime::TensorView& view) const;
  // A host tensor laid out like `view` (bytes sized to its extent, zero).
  static HostTensor like(const runtime::TensorView& view);

  // Element at a full index (one per dimension).
  double get(const std::vector<std::int64_t>& index) const;
  void set(const std::vector<std::int64_t>& index, double value);  // rounded to nearest even
  // (batch, row, col) of a rank-2 (batch ignored) or rank-3 matrix.
  double matrix(std::int64_t l, std::int64_t r, std::int64_t c) const;
};

// D = alpha·A·B + beta·C (C may be null; then beta is ignored), in fp64, as an
// (L, M, N) row-major array; A (M, K) or (L, M, K), B (K, N) or (L, K, N), C
// like D. Operands of rank 2 serve every batch.
std::vector<double> gemm_reference(const HostTensor& a, const HostTensor& b, const HostTensor* c,
                                   double alpha, double beta);

// The largest |got - want| / max(|want|, floor) over all elements (NaN in
// `got` counts as infinite error); `got` is D as a HostTensor.
double max_relative_error(const HostTensor& got, const std::vector<double>& want, double floor);

}  // namespace warpforge::ops
