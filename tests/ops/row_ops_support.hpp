// Host-side helpers of the row ops' tests (norms, softmax, SwiGLU,
// cross-entropy, norm + quantize): float rows uploaded in a dtype with any
// row stride, outputs poisoned with NaN before a run, read back as floats,
// and the error bounds the comparisons use.
//
// Bounds (fp64 references): an output rounded once to its dtype is within
// half an ulp, u = 2^-8 (bf16), 2^-11 (f16), 2^-24 (f32), of the exact
// value relative to it; the f32 statistics before it (sums in a tree,
// rsqrt.approx and ex2.approx at about 2^-22) add an error relative to the
// row's scale (e.g. max |xhat · weight| for a norm), allowed as 2^-16 of it
// (f32 outputs' bound is that term; the 16-bit outputs' is mostly u).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/dtype.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops::testing {

// Host floats of `rows` x `n`, rounded to `dtype` (what the device sees).
struct HostRows {
  runtime::DType dtype = runtime::DType::f32;
  std::int64_t rows = 0, n = 0;
  std::vector<float> values;  // row-major, rows x n
  float at(std::int64_t r, std::int64_t c) const { return values[static_cast<std::size_t>(r * n + c)]; }
};

// Normal(mean, sigma) values rounded to `dtype`.
HostRows random_rows(std::mt19937& rng, runtime::DType dtype, std::int64_t rows, std::int64_t n, float sigma = 1.0f,
                     float mean = 0.0f);
// `value` rounded to dtype.
float rounded(runtime::DType dtype, float value);
// Half an ulp relative: 2^-8, 2^-11, 2^-24.
double unit_roundoff(runtime::DType dtype);
// The f32 statistics' allowance relative to the row's scale (above): 2^-16.
inline constexpr double kStatistics = 1.0 / 65536;

// The simulator, where the row ops' simulator tests run them.
inline runtime::Device sim() { return runtime::Device::sim(); }

// A device tensor holding rows: shape (rows, n) with row stride `stride`
// (>= n; the gap between rows poisoned), or shape (n) for one row of `vector`.
struct DeviceRows {
  std::shared_ptr<runtime::Buffer> buffer;
  runtime::Tensor tensor;
  const runtime::TensorView& view() const { return tensor; }
};
DeviceRows upload(const runtime::Device& device, const HostRows& rows, std::int64_t stride = 0);
DeviceRows upload_vector(const runtime::Device& device, const HostRows& one_row);
// An output of `dtype` and shape (rows, n) (row stride `stride`), every byte of it NaN bits.
DeviceRows poisoned(const runtime::Device& device, runtime::DType dtype, std::int64_t rows, std::int64_t n,
                    std::int64_t stride = 0);
DeviceRows poisoned_vector(const runtime::Device& device, runtime::DType dtype, std::int64_t n);
// The values of a (rows, n) or (n) view, as floats.
HostRows download(const runtime::TensorView& view);

// Counts the elements outside |got - want| <= bound(r, c) + half the
// spacing of got's dtype's subnormals (NaN matching NaN, infinities matching
// exactly) and describes the first few.
struct Mismatches {
  std::int64_t count = 0;
  std::string first;
};
Mismatches compare(const HostRows& got, const std::vector<double>& want,
                   const std::function<double(std::int64_t r, std::int64_t c)>& bound);

}  // namespace warpforge::ops::testing
