#include "sm90a_tensor_map.hpp"

namespace warpforge::ops {

runtime::TensorMap attention_tensor_map(const runtime::Device& device, runtime::DevicePtr address, runtime::DType dtype,
                                        const AttentionStrides& st, std::int64_t rows, std::int64_t heads,
                                        std::int64_t batch, std::int64_t head_dim, std::uint32_t box_rows) {
  const auto bytes = [](std::int64_t elements) { return static_cast<std::uint64_t>(elements * 2); };
  // A stride of a dimension of extent 1 is never stepped: any multiple of 16 will do.
  const std::uint64_t batch_bytes = batch > 1 ? bytes(st.batch) : (bytes(st.head) * heads + 15) / 16 * 16 + 16;
  const std::uint64_t head_bytes = heads > 1 ? bytes(st.head) : (bytes(st.row) * rows + 15) / 16 * 16 + 16;
  return runtime::make_tensor_map(device, {.dtype = dtype,
                                           .address = address,
                                           .dims = {static_cast<std::uint64_t>(head_dim), static_cast<std::uint64_t>(rows),
                                                    static_cast<std::uint64_t>(heads), static_cast<std::uint64_t>(batch)},
                                           .strides_bytes = {bytes(st.row), head_bytes, batch_bytes},
                                           .box = {64, box_rows, 1, 1},
                                           .swizzle = runtime::TensorMapSwizzle::b128});
}

runtime::TensorMap attention_tensor_map(const runtime::Device& device, const runtime::TensorView& v,
                                        const AttentionStrides& st, std::int64_t rows, std::int64_t heads,
                                        std::int64_t batch, std::int64_t head_dim, std::uint32_t box_rows) {
  return attention_tensor_map(device, v.address(), v.dtype(), st, rows, heads, batch, head_dim, box_rows);
}

}  // namespace warpforge::ops
