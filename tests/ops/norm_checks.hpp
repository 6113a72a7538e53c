// The normalizations' checks against fp64 references (bounds:
// row_ops_support.hpp), run on the simulator by norm_sim_test.cpp and on a
// GPU by tests/gpu/norm_gpu_test.cpp: forward cases (every dtype, warp, CTA
// and cluster rows, ragged and strided rows, the fused residual), the
// special rows (one element, all equal, near each dtype's largest, NaN and
// infinity as PyTorch propagates them) and backward cases (dx, dweight,
// dbias, the residual's gradient).
#pragma once

#include <cstdint>
#include <optional>

#include "warpforge/ops/norm.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops::testing {

using runtime::DType;

struct NormCase {  // a forward problem: dtypes, the optional tensors, rows x n (row stride)
  NormKind kind = NormKind::rms;
  DType x = DType::bf16, y = DType::bf16;
  std::optional<DType> weight = DType::bf16, bias, residual;
  std::int64_t rows = 5, n = 96, stride = 0;
  float eps = 1e-5f;
};

// Runs the case on `device` (outputs poisoned first) and compares y, h,
// mean and rstd with the fp64 reference; kernel: the span expected, if given.
void check_norm(const runtime::Device& device, const NormCase& c, std::uint32_t seed, const char* kernel = nullptr);

struct BackwardCase {
  NormKind kind = NormKind::rms;
  DType x = DType::bf16, dy = DType::bf16, dx = DType::bf16;
  std::optional<DType> weight = DType::bf16;
  bool dweight = true, dbias = false, dresidual = false;
  std::int64_t rows = 37, n = 200;
  // Where not 1: dy's magnitudes (all positive) times this (1e37 at n 1000: the
  // row sums of g and g · xhat overflow f32).
  float dy_scale = 1.0f;
  // Where not 0: the row groups describe() names (each adding dweight's and dbias's sums of its rows).
  std::int64_t groups = 0;
};

void check_norm_backward(const runtime::Device& device, const BackwardCase& c, std::uint32_t seed,
                         const char* kernel = nullptr);

// One-element rows (layer: y = bias exactly); all-equal rows (layer: y =
// bias exactly; rms against the reference); values near bf16's, f16's and
// f32's largest (no overflow); a NaN row (all NaN) and an infinite element
// (rms: 0 and NaN, layer: NaN), as PyTorch gives.
void check_norm_one_element_rows(const runtime::Device& device);
void check_norm_all_equal_rows(const runtime::Device& device);
void check_norm_values_near_the_largest(const runtime::Device& device);
void check_norm_nan_and_infinity(const runtime::Device& device);

}  // namespace warpforge::ops::testing
