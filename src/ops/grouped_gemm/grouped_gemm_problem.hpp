// What a grouped-GEMM kernel is specialised for: the problem without its
// data, read from the TensorViews (grouped_gemm.hpp). Every kernel path
// reads only this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "warpforge/ops/grouped_gemm.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

enum class GroupedForm { ragged_m, ragged_k };

// One matrix operand, logically rows x cols (A: M x K; B: K x N; D: M x N):
// `cols_contiguous` when the column index has stride 1 (row-major), `ld`
// the stride of the other index, `batch` the stride between groups (B in
// ragged M, D in ragged K), all in elements (FP4: nibbles).
struct GroupedOperand {
  bool cols_contiguous = true;
  std::int64_t ld = 0, batch = 0;
  friend bool operator==(const GroupedOperand&, const GroupedOperand&) = default;
};

struct GroupedGemmProblem {
  GroupedForm form = GroupedForm::ragged_m;
  std::int64_t m = 0, n = 0, k = 0, groups = 1;
  runtime::DType a_dtype = runtime::DType::bf16;  // bf16, f16, or block-scaled codes (e4m3, e5m2, e2m1)
  runtime::DType b_dtype = runtime::DType::bf16;  // bf16, f16, or packed codes
  runtime::DType d_dtype = runtime::DType::bf16;
  runtime::DType sf_dtype = runtime::DType::e8m0;  // scales of the block-scaled operands
  int vec = 32;
  bool scaled_a = false;  // A is codes with SFA (128x4 layout over M rows)
  bool packed_b = false;  // B is block-scaled, packed (PackedWeightsLayout)
  // With packed_b: B is block-scaled as GemmAmax takes it instead, one
  // group's (N, K) codes with K contiguous (rows b.ld apart) and SFB in the
  // 128x4 layout over N (GemmAmax's stream path; GroupedGemm never sets it).
  bool native_b = false;
  bool amax = false;
  bool has_offsets = true;  // false: one group, no offsets tensor
  GroupedOperand a, b, d;

  PackedWeightsLayout packed_layout() const { return {b_dtype, sf_dtype, vec, groups, k, n}; }
  // "ragged M: 5 groups, M 300, N 72, K 96, bf16 x bf16 -> f32"
  std::string describe() const;
  friend bool operator==(const GroupedGemmProblem&, const GroupedGemmProblem&) = default;
};

// The problem the tensors describe, and in `refusals` every rule they break
// (then the problem is partial and must not be compiled).
GroupedGemmProblem describe_grouped_gemm(const GroupedGemmTensors& t, const GroupedGemmOptions& options,
                                         std::vector<std::string>& refusals);

// Whether the format (data, scale, vec) is one of the block-scaled formats
// (MXFP8 e4m3/e5m2 x e8m0/32, MXFP4 e2m1 x e8m0/32, NVFP4 e2m1 x e4m3/16,
// e2m1 x e8m0/16), and if not why (GemmAmax's rules).
std::vector<std::string> block_scaled_format_refusals(runtime::DType data, runtime::DType scale, int vec);

// "MXFP4 (e2m1 x e8m0/32)"
std::string block_scaled_format_name(runtime::DType data, runtime::DType scale, int vec);

}  // namespace warpforge::ops
