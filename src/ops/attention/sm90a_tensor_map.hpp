// The TMA maps of the sm90a attention kernels (forward and backward): a
// (batch, heads, rows, head_dim) view (varlen: one batch of every row) as
// boxes of 64 elements of head_dim by `box_rows` rows, in the 128-byte
// swizzle their wgmma descriptors read. Made on the host from the tensors'
// addresses (no synchronisation).
#pragma once

#include <cstdint>

#include "attention_problem.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {

runtime::TensorMap attention_tensor_map(const runtime::Device& device, runtime::DevicePtr address, runtime::DType dtype,
                                        const AttentionStrides& st, std::int64_t rows, std::int64_t heads,
                                        std::int64_t batch, std::int64_t head_dim, std::uint32_t box_rows);
// The map of view v (its address and dtype).
runtime::TensorMap attention_tensor_map(const runtime::Device& device, const runtime::TensorView& v,
                                        const AttentionStrides& st, std::int64_t rows, std::int64_t heads,
                                        std::int64_t batch, std::int64_t head_dim, std::uint32_t box_rows);

}  // namespace warpforge::ops
