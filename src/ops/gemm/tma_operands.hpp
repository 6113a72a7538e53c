// The GEMM operands as TMA sees them, shared by the kernels that load them
// with tensor maps (sm90a, sm100a): a matrix as a rank-3 tensor map, and
// what TMA asks of an operand's address and strides.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gemm_problem.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {

// A rows x cols matrix of `layout` as a rank-3 tensor map (inner, outer,
// batch) with `swizzle` (the box's inner bytes at most its span), the box
// given inner first. With one batch the batch stride only has to be legal:
// the matrix's own extent.
runtime::TensorMapDesc matrix_map(runtime::DType dtype, runtime::DevicePtr address,
                                  std::int64_t inner, std::int64_t outer, std::int64_t l,
                                  const MatrixLayout& layout, std::uint32_t box_inner,
                                  std::uint32_t box_outer,
                                  runtime::TensorMapSwizzle swizzle = runtime::TensorMapSwizzle::b128);

// What TMA needs of one operand (CUDA driver API cuTensorMapEncodeTiled): a
// 16-byte aligned base and 16-byte multiples for every stride. Each refusal
// names `kernel` ("the sm90a kernel").
void check_tma_operand(std::vector<std::string>& why, const std::string& kernel, const char* name,
                       const MatrixLayout& layout, runtime::DType dtype, std::int64_t l);

// TMA coordinates are signed 32-bit (PTX ISA 9.7.9.25.5.1): M, N and K
// beyond 2^31 - 1 are refused.
void check_tma_extents(std::vector<std::string>& why, const GemmProblem& p);

}  // namespace warpforge::ops
