// What a block-scaled GEMM + amax kernel is specialised for: the problem
// without its data, normalised from the TensorViews (FP4 given as u8 bytes
// becomes e2m1 with element strides). Every kernel path reads only this.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/ops/gemm_amax.hpp"
#include "warpforge/runtime/dtype.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// Strides in elements (e2m1: in nibbles) of a (rows, cols, batch) matrix: for
// A (M, K), B (N, K), C (M, N).
struct MatrixStrides {
  std::int64_t row = 0, col = 0, batch = 0;
  friend bool operator==(const MatrixStrides&, const MatrixStrides&) = default;
};

struct GemmAmaxProblem {
  std::int64_t m = 0, n = 0, k = 0, l = 1;
  runtime::DType ab_dtype = runtime::DType::e4m3;  // e4m3, e5m2, e2m1
  runtime::DType sf_dtype = runtime::DType::e8m0;  // e8m0, e4m3
  runtime::DType c_dtype = runtime::DType::f32;    // f32, f16, bf16, e4m3, e5m2, e2m1
  int vec = 32;
  MatrixStrides a, b, c;
  std::optional<GemmAmaxTile> tile;  // absent: the path's default
  std::optional<GemmAmaxTile> cluster;  // absent: the path's default
  GemmAmaxPrecision precision = GemmAmaxPrecision::exact;
  std::string describe() const;  // "100x72x96 L3 e4m3 x e8m0/32 -> bf16"
  friend bool operator==(const GemmAmaxProblem&, const GemmAmaxProblem&) = default;
};

// The problem the views describe, and in `refusals` every rule they break
// (then the problem is partial and must not be compiled).
GemmAmaxProblem describe_gemm_amax(const runtime::TensorView& a, const runtime::TensorView& b,
                                   const runtime::TensorView& sfa, const runtime::TensorView& sfb,
                                   const runtime::TensorView& c, const runtime::TensorView& amax,
                                   const GemmAmaxOptions& options,
                                   std::vector<std::string>& refusals);

// The bytes of `elements` codes of `ab` (E2M1: two per byte, rounded up).
std::int64_t code_bytes(runtime::DType ab, std::int64_t elements);

// What a kernel reading K-major A and B in 16-byte pieces needs of one of
// them (`name`): K stride 1, and row and (with L > 1) batch strides that are
// multiples of 16 bytes, the batch stride nonzero too where
// `nonzero_batch`. Refusals name the kernel ("the sm90a kernel"), its loads
// ("TMA loads") and, where given, what takes the operand instead.
struct KMajorOperandRule {
  std::string_view kernel, loads, others;
  bool nonzero_batch = false;
};
void check_k_major_operand(std::vector<std::string>& why, const char* name, runtime::DType ab,
                           const MatrixStrides& s, std::int64_t l, const KMajorOperandRule& rule);

// What a kernel that addresses A, B and C with 32-bit element offsets and
// runs the batches along grid z needs (`kernel`: "the sm80 kernel"): every
// offset below 2^31 and L at most 65535.
void check_offsets_and_batches(std::vector<std::string>& why, const GemmAmaxProblem& p, std::string_view kernel);

}  // namespace warpforge::ops
