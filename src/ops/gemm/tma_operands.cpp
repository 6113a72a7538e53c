#include "tma_operands.hpp"

#include <limits>
#include <utility>

namespace warpforge::ops {

runtime::TensorMapDesc matrix_map(runtime::DType dtype, runtime::DevicePtr address,
                                  std::int64_t inner, std::int64_t outer, std::int64_t l,
                                  const MatrixLayout& layout, std::uint32_t box_inner,
                                  std::uint32_t box_outer, runtime::TensorMapSwizzle swizzle) {
  const std::int64_t es = runtime::bits(dtype) / 8;
  std::int64_t batch = layout.batch_stride * es;
  if (l == 1 || batch == 0) batch = (layout.ld * outer * es + 15) / 16 * 16;
  return {.dtype = dtype,
          .address = address,
          .dims = {static_cast<std::uint64_t>(inner), static_cast<std::uint64_t>(outer),
                   static_cast<std::uint64_t>(l)},
          .strides_bytes = {static_cast<std::uint64_t>(layout.ld * es),
                            static_cast<std::uint64_t>(batch)},
          .box = {box_inner, box_outer, 1},
          .swizzle = swizzle};
}

void check_tma_operand(std::vector<std::string>& why, const std::string& kernel, const char* name,
                       const MatrixLayout& layout, runtime::DType dtype, std::int64_t l) {
  const std::int64_t es = runtime::bits(dtype) / 8;
  if (layout.base_alignment < 16)
    why.push_back(std::string(name) + "'s address is " + std::to_string(layout.base_alignment) +
                  "-byte aligned; " + kernel + "'s TMA copies need 16");
  if (layout.ld * es % 16 != 0)
    why.push_back(std::string(name) + "'s leading dimension " + std::to_string(layout.ld) + " (" +
                  std::to_string(layout.ld * es) +
                  " bytes) is not a multiple of 16 bytes, which TMA needs");
  if (l > 1 && (layout.batch_stride * es % 16 != 0 || layout.batch_stride == 0))
    why.push_back(std::string(name) + "'s batch stride " + std::to_string(layout.batch_stride) +
                  " elements is not a nonzero multiple of 16 bytes, which TMA needs");
}

void check_tma_extents(std::vector<std::string>& why, const GemmProblem& p) {
  for (auto [name, v] : {std::pair{"M", p.m}, {"N", p.n}, {"K", p.k}})
    if (v > std::numeric_limits<std::int32_t>::max())
      why.push_back(std::string(name) + " = " + std::to_string(v) +
                    "; TMA coordinates reach 2^31 - 1");
}

}  // namespace warpforge::ops
