#include "block_scaled_maps.hpp"

namespace warpforge::ops {

runtime::TensorMapDesc code_map(runtime::DType ab, runtime::DevicePtr address, std::int64_t rows,
                                std::int64_t k, std::int64_t l, const MatrixStrides& s,
                                std::uint32_t box_bytes, std::uint32_t box_rows,
                                runtime::TensorMapSwizzle swizzle) {
  const std::int64_t row = code_bytes(ab, s.row);
  std::int64_t batch = code_bytes(ab, s.batch);
  if (l == 1 || batch == 0) batch = (row * rows + 15) / 16 * 16;
  const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  return {.dtype = runtime::DType::u8,
          .address = address,
          .dims = {u64(code_bytes(ab, k)), u64(rows), u64(l)},
          .strides_bytes = {u64(row), u64(batch)},
          .box = {box_bytes, box_rows, 1},
          .swizzle = swizzle};
}

runtime::TensorMapDesc scale_map(runtime::DevicePtr address, const ScaleFactorLayout& layout) {
  return {.dtype = runtime::DType::u8,
          .address = address,
          .dims = {256, static_cast<std::uint64_t>(layout.bytes() / 256)},
          .strides_bytes = {256},
          .box = {256, 2},
          .swizzle = runtime::TensorMapSwizzle::none};
}

}  // namespace warpforge::ops
