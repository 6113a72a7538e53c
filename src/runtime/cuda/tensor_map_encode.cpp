// CudaBackend::encode_tensor_map: a checked TensorMapDesc to the driver's
// cuTensorMapEncodeTiled (CUDA Driver API 6.30 "Tensor Map Object Management").
#include <cstring>
#include <string>
#include <vector>

#include "context_scope.hpp"
#include "driver.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/cuda_backend.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::runtime {

using namespace cuda;

namespace {

// The driver's element types move bits, not values, so every 8-bit type
// (fp8, e8m0, i8) travels as UINT8 and i16 as UINT16: TMA never converts.
CUtensorMapDataType driver_type(DType t) {
  switch (t) {
    case DType::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::f64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case DType::i16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case DType::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DType::u32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case DType::i64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case DType::u64: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
    default: return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // the 8-bit types; e2m1 was refused by the check
  }
}

CUtensorMapSwizzle driver_swizzle(TensorMapSwizzle s) {
  switch (s) {
    case TensorMapSwizzle::none: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case TensorMapSwizzle::b32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case TensorMapSwizzle::b64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case TensorMapSwizzle::b128: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

CUtensorMapL2promotion driver_promotion(TensorMapL2Promotion promotion) {
  switch (promotion) {
    case TensorMapL2Promotion::none: return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    case TensorMapL2Promotion::b64: return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case TensorMapL2Promotion::b128: return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    case TensorMapL2Promotion::b256: return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  }
  return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

}  // namespace

TensorMap CudaBackend::encode_tensor_map(const TensorMapDesc& desc) {
  const Driver& d = driver();
  if (!d.cuTensorMapEncodeTiled)
    throw CudaError("dlsym(libcuda.so.1, cuTensorMapEncodeTiled)", -1, "CUDA driver too old",
                    "the driver does not export cuTensorMapEncodeTiled; tensor maps need a CUDA 12.0 or newer "
                    "driver");
  const ContextScope scope = enter();  // the driver encodes in the current context
  const auto rank = static_cast<unsigned>(desc.dims.size());
  std::vector<unsigned long long> dims(desc.dims.begin(), desc.dims.end());
  // The driver takes the strides of dims[1..] only (dims[0] is contiguous).
  std::vector<unsigned long long> strides(desc.strides_bytes.begin(), desc.strides_bytes.end());
  std::vector<unsigned> box(desc.box.begin(), desc.box.end());
  std::vector<unsigned> element_strides(desc.element_strides.begin(), desc.element_strides.end());
  if (element_strides.empty()) element_strides.assign(rank, 1);
  CUtensorMap map;
  check(d.cuTensorMapEncodeTiled(&map, driver_type(desc.dtype), rank, reinterpret_cast<void*>(desc.address),
                                 dims.data(), strides.data(), box.data(), element_strides.data(),
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, driver_swizzle(desc.swizzle),
                                 driver_promotion(desc.l2_promotion), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        [&] {
          return "cuTensorMapEncodeTiled(" + std::string(name(desc.dtype)) + ", rank " + std::to_string(rank) +
                 ", address " + std::to_string(desc.address) + ")";
        });
  TensorMap out;
  static_assert(sizeof out.bytes == sizeof map);
  std::memcpy(out.bytes.data(), &map, sizeof map);
  return out;
}

}  // namespace warpforge::runtime
