// Shared by the GemmAmax GPU tests: block-scaled operands quantized from
// U(-2, 2) data with ops::quantize and uploaded, and C's elements decoded.
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "warpforge/ops/half.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/quantize.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::runtime::gpu_testing {

struct Operand {
  ops::QuantizedMatrix q;
  Tensor data, scales;
};

inline Operand upload(const Device& dev, std::int64_t rows, std::int64_t k, std::int64_t l,
                      ops::BlockScaledFormat f, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> x(static_cast<std::size_t>(rows * k * l));
  for (auto& v : x) v = u(rng);
  auto q = ops::quantize(x, rows, k, l, f);
  const bool fp4 = f.data == DType::e2m1;
  const std::int64_t cols = fp4 ? k / 2 : k;
  auto bytes = Tensor::empty(dev, DType::u8, {static_cast<std::int64_t>(q.data.size())});
  bytes.copy_from_host(q.data.data(), q.data.size());
  Tensor data(TensorView(dev, bytes.address(), fp4 ? DType::u8 : f.data, {rows, cols, l}, {cols, 1, rows * cols}),
              bytes.storage());
  auto scales = Tensor::empty(dev, f.scale, {static_cast<std::int64_t>(q.scales.size())});
  scales.copy_from_host(q.scales.data(), q.scales.size());
  return {std::move(q), std::move(data), std::move(scales)};
}

inline float element(const std::vector<std::uint8_t>& c, DType t, std::int64_t e) {
  if (t == DType::f32) {
    float f;
    std::memcpy(&f, c.data() + 4 * e, 4);
    return f;
  }
  if (t == DType::bf16 || t == DType::f16) {
    std::uint16_t h;
    std::memcpy(&h, c.data() + 2 * e, 2);
    return t == DType::f16 ? ops::f16_bits_to_f32(h) : ops::bf16_bits_to_f32(h);
  }
  if (t == DType::e2m1) return ops::decode(t, ops::e2m1_at(c, e));
  return ops::decode(t, c[static_cast<std::size_t>(e)]);
}

}  // namespace warpforge::runtime::gpu_testing
