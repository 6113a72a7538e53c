// The softmax checks against fp64 references (bounds: row_ops_support.hpp;
// exponentials add 2^-16 of each value), run on the simulator by
// softmax_sim_test.cpp and on a GPU by tests/gpu/softmax_gpu_test.cpp.
#pragma once

#include <cstdint>
#include <functional>

#include "row_ops_support.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {

struct SoftmaxCase {
  runtime::DType x = runtime::DType::bf16, y = runtime::DType::bf16;
  std::int64_t rows = 5, n = 96, stride = 0;
  float sigma = 3.0f;  // x ~ N(0, sigma)
};

// Forward then backward (dy random, dx in y's dtype) of `c` on `device`
// against the fp64 reference of the x given (`shape_x` may rewrite it);
// kernel: the span expected of the forward, if given.
void check_softmax(const runtime::Device& device, const SoftmaxCase& c, std::uint32_t seed,
                   const char* kernel = nullptr, const std::function<void(HostRows&)>& shape_x = {});

// One-element rows (y = 1), all-equal rows (1/n), values near each dtype's
// largest, and NaN, +inf and all -inf rows (NaN rows, as PyTorch).
void check_softmax_special_rows(const runtime::Device& device);

}  // namespace warpforge::ops::testing
