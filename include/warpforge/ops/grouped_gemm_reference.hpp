// The grouped GEMM's CPU reference (grouped_gemm.hpp), in fp64, per group,
// for tests, the command line's checks and the benchmark. Offsets are read
// as the kernels read them: the running maximum so far, clamped to
// [0, M] (ragged M) or [0, K] (ragged K).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "warpforge/ops/gemm_amax_reference.hpp"
#include "warpforge/ops/gemm_reference.hpp"

namespace warpforge::ops {

// Every element of D with what bounds a kernel's error: D computed exactly
// (each product exact, summed in fp64) and the sum of the products'
// magnitudes. An f32 accumulation of exact products in any order is within
// K·2^-23·magnitude of `value` (each of the at most K additions rounds by at
// most half an ulp of a partial sum, itself at most `magnitude`).
struct GroupedReference {
  std::int64_t groups = 0, rows = 0, n = 0;  // D is (rows, n), or (groups, rows, n) for ragged K
  bool ragged_k = false;
  std::vector<double> value, magnitude;      // row-major, D's shape
};

// The running maximum of the offsets, clamped to [0, extent]: the groups'
// ends as the kernels use them.
std::vector<std::int64_t> clamped_group_ends(std::span<const std::int32_t> offsets, std::int64_t extent);

// bf16/f16 operands: A (M, K); B (G, K, N) for ragged M, (K, N) for ragged K.
GroupedReference grouped_gemm_reference(const HostTensor& a, const HostTensor& b,
                                        std::span<const std::int32_t> offsets);
// Ragged M with block-scaled B given unpacked, k-major: b.rows = N, b.batches
// = G (B[g] is its (N, K) matrix transposed); A bf16 (M, K) or block-scaled
// (rows = M, one batch).
GroupedReference grouped_gemm_reference(const HostTensor& a, const BlockScaledOperand& b,
                                        std::span<const std::int32_t> offsets);
GroupedReference grouped_gemm_reference(const BlockScaledOperand& a, const BlockScaledOperand& b,
                                        std::span<const std::int32_t> offsets);

}  // namespace warpforge::ops
