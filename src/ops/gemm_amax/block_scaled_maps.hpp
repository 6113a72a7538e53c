// The block-scaled operands as TMA sees them, shared by the kernels that
// load them with tensor maps (sm90a, sm100a): the codes of a K-major operand
// and the bytes of its 128x4 scale layout.
#pragma once

#include <cstdint>

#include "gemm_amax_problem.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {

// The raw bytes of a K-major operand (rows, K, L) as a u8 tensor map (K
// bytes, rows, L) with a box of box_bytes x box_rows. With one batch the
// batch stride only has to be legal: the matrix's own extent.
runtime::TensorMapDesc code_map(runtime::DType ab, runtime::DevicePtr address, std::int64_t rows,
                                std::int64_t k, std::int64_t l, const MatrixStrides& s,
                                std::uint32_t box_bytes, std::uint32_t box_rows,
                                runtime::TensorMapSwizzle swizzle);

// The scale bytes of the 128x4 layout as a u8 tensor map of 256-byte rows
// with a box of two rows: one 512-byte group of 128 rows x 4 scale blocks,
// group g at row 2g.
runtime::TensorMapDesc scale_map(runtime::DevicePtr address, const ScaleFactorLayout& layout);

}  // namespace warpforge::ops
