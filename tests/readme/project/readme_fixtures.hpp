// Inputs for README.md's examples (tests/readme): tensors on a device, filled
// with a repeating pattern of raw element values, and quantized matrices as
// GemmAmax takes them. Kept out of the README so that its hidden set-up stays
// a line or two a block.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "warpforge/ops/quantize.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace readme {

// A tensor of `dtype` and `shape` whose elements cycle through `pattern`, each
// given as the element's own bytes (a bf16 as its std::uint16_t bits, an f32
// as a float).
template <class T>
warpforge::runtime::Tensor filled(const warpforge::runtime::Device& dev, warpforge::runtime::DType dtype,
                                  std::vector<std::int64_t> shape, std::vector<T> pattern) {
  auto t = warpforge::runtime::Tensor::empty(dev, dtype, shape);
  std::vector<T> values(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = pattern[i % pattern.size()];
  t.copy_from_host(values.data(), values.size() * sizeof(T));
  return t;
}

// A quantized matrix's codes, a (rows, K, L) k-major view of `code_dtype`, and
// its scales (`scale_dtype`), on `dev`.
inline std::pair<warpforge::runtime::Tensor, warpforge::runtime::Tensor> on_device(
    const warpforge::runtime::Device& dev, const warpforge::ops::QuantizedMatrix& q,
    warpforge::runtime::DType code_dtype, warpforge::runtime::DType scale_dtype) {
  using warpforge::runtime::DType;
  using warpforge::runtime::Tensor;
  auto data = Tensor::empty(dev, DType::u8, {static_cast<std::int64_t>(q.data.size())});
  data.copy_from_host(q.data.data(), q.data.size());
  Tensor codes(warpforge::runtime::TensorView(dev, data.address(), code_dtype, {q.rows, q.k, q.batches},
                                              {q.k, 1, q.rows * q.k}),
               data.storage());
  auto scales = Tensor::empty(dev, scale_dtype, {static_cast<std::int64_t>(q.scales.size())});
  scales.copy_from_host(q.scales.data(), q.scales.size());
  return {codes, scales};
}

}  // namespace readme
