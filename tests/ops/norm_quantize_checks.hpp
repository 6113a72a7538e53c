// The RMSNorm + quantize checks: the codes and scales bit for bit those of
// ops::quantize applied to the normalized values the kernel writes as y
// (f32), y itself bit for bit ops::Norm's (the same kernel arithmetic), and
// y against the fp64 reference; run on the simulator by
// norm_quantize_sim_test.cpp and on a GPU by tests/gpu/norm_quantize_gpu_test.cpp.
#pragma once

#include <cstdint>
#include <functional>

#include "row_ops_support.hpp"
#include "warpforge/ops/quantize.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {

struct NormQuantizeCase {
  BlockScaledFormat format = kMxfp8E4m3;
  runtime::DType x = runtime::DType::bf16;
  bool weight = true, residual = false, normalize = true;
  std::int64_t rows = 5, k = 256, stride = 0;  // stride: x's row stride (0: k)
};

void check_norm_quantize(const runtime::Device& device, const NormQuantizeCase& c, std::uint32_t seed,
                         const char* kernel = nullptr, const std::function<void(HostRows&)>& shape_x = {});

// NVFP4 without the norm, blocks whose values divided by their scale fall
// exactly on the e2m1 ties (0.25, 0.75, ..., 5: rounded to even), for every
// e4m3 scale, and a block of infinities: the kernel's division (a reciprocal
// and a correction) must round as quantize()'s does.
void check_nvfp4_ties(const runtime::Device& device);

// Normalized rows whose squares overflow an f32 sum (values near bf16's
// largest) or pass 2^64 (values 2^40 times the others): the kernel's plain
// sum of squares falls back to the scaled one (rows::allreduced_sums), and
// y is still ops::Norm's bit for bit.
void check_rows_past_the_plain_sum(const runtime::Device& device, const BlockScaledFormat& format);

// Without the norm, f32 blocks of amax 2^-104 down to the subnormals and
// -0: e8m0 scales clamped at 2^-127, e4m3 scales at their smallest, codes ±0
// with the value's sign.
void check_tiny_blocks(const runtime::Device& device, const BlockScaledFormat& format);

// More rows than the row groups resident at once (16 a device's SM at the
// norm's shape for K 2048): 8 vectors a thread at 512 threads an SM
// (choose_norm_quantize_shape), a row over 32 threads where the norm's shape
// takes 64 at 4 vectors (each thread's Σ h² two sums, allreduced as that
// shape's: y is ops::Norm's bit for bit); 4 rows keep the norm's. NVFP4 of x
// and weight, MXFP8 with the residual (two tensors held: 2 -> 4 vectors a
// thread), MXFP4 at K 4096, and a row whose squares overflow f32 (on an
// H200 2120 rows each).
void check_many_rows(const runtime::Device& device);

}  // namespace warpforge::ops::testing
