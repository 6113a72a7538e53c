// The TMA maps of the sm90a attention kernels (forward and backward): a
// (batch, heads, rows, head_dim) view (varlen: one batch of every row) as
// boxes of 64 elements of head_dim by `box_rows` rows, in the 128-byte
// swizzle their wgmma descriptors read; and the backward's dQ sums. Made on the host for each run from
// the views' addresses (no allocation, no synchronisation).
#pragma once

#include <cstdint>

#include "attention_problem.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {

runtime::TensorMap attention_tensor_map(const runtime::Device& device, const runtime::TensorView& v,
                                        const AttentionStrides& st, std::int64_t rows, std::int64_t heads,
                                        std::int64_t batch, std::int64_t head_dim, std::uint32_t box_rows);

// The backward's f32 dQ sums (dq_accum: rows x heads x head_dim, dense)
// for TMA reduce-adds, head_dim as groups of 8 columns (32 bytes): dims
// (8 columns, rows, head_dim/8 groups, heads), so that a box of 64 rows by
// `box_columns`/8 groups of one head lies in shared memory group by group,
// each 64 rows of 32 bytes (a warp's accumulator store there is 256
// contiguous bytes); no swizzle.
runtime::TensorMap dq_accum_tensor_map(const runtime::Device& device, runtime::DevicePtr address, std::int64_t rows,
                                       std::int64_t heads, std::int64_t head_dim, std::uint32_t box_columns);

}  // namespace warpforge::ops
