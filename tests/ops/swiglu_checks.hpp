// The SwiGLU checks against fp64 references (bounds: row_ops_support.hpp;
// exp and the reciprocal are .approx: 2^-16 of the value besides the
// output's rounding), run on the simulator by swiglu_sim_test.cpp and on a
// GPU by tests/gpu/swiglu_gpu_test.cpp.
#pragma once

#include <cstdint>
#include <functional>

#include "row_ops_support.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {

struct SwigluCase {
  runtime::DType in = runtime::DType::bf16, out = runtime::DType::bf16;
  bool interleaved = false;  // one (rows, 2n) tensor; else gate and up the halves of one (rows, 2n) tensor
  std::int64_t rows = 5, n = 96;
};

// Forward then backward of `c` on `device`; `shape_gate` may rewrite the
// gate values; kernel: the span expected, if given.
void check_swiglu(const runtime::Device& device, const SwigluCase& c, std::uint32_t seed, const char* kernel = nullptr,
                  const std::function<void(HostRows&)>& shape_gate = {});

// Gates of -inf, +inf, NaN, large magnitudes (silu saturating), values near
// each dtype's largest.
void check_swiglu_special_values(const runtime::Device& device);

}  // namespace warpforge::ops::testing
