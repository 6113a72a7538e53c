// TMA tensor maps: the 128-byte descriptor that cp.async.bulk.tensor reads to
// copy a box of a tensor between global and shared memory (PTX ISA 9.7.9.25
// "cp.async.bulk.tensor", 5.5 "Tensor Map"). The caller describes the tensor
// once (TensorMapDesc); make_tensor_map checks it against the CUDA driver's
// rules (CUDA Driver API 6.30 "Tensor Map Object Management",
// cuTensorMapEncodeTiled) and has the device's backend encode it: the CUDA
// backend through cuTensorMapEncodeTiled, the simulator in its own format
// (sim/tensor_map_encoding.hpp). The kernel receives the map by value as a
// `.param .align 64 .b8 name[128]` argument: `Arg::bytes_of(map)`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "warpforge/runtime/backend.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::runtime {

class Device;

// How TMA swizzles the 16-byte chunks of each row of the box in shared memory
// (CU_TENSOR_MAP_SWIZZLE_*): chunk index XOR (row index modulo span/16),
// repeating every 8 rows of span bytes (PTX ISA 5.5.7 "Tensor swizzling modes").
enum class TensorMapSwizzle : std::uint8_t { none, b32, b64, b128 };

// The span in bytes of a swizzle mode: 0, 32, 64 or 128.
std::uint32_t swizzle_bytes(TensorMapSwizzle swizzle);

// How many bytes L2 fetches from DRAM on a copy's miss
// (CU_TENSOR_MAP_L2_PROMOTION_*): the sector (none) or 64, 128, 256 bytes.
enum class TensorMapL2Promotion : std::uint8_t { none, b64, b128, b256 };

// A tiled tensor in global memory and the box one TMA copy moves. Fixed
// choices, not configurable: no interleave, and out-of-bounds elements read
// as zero (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE; the other choice turns them
// into NaN). L2 promotion is 256 bytes unless set (the widest: GEMM operand
// tiles are read whole, so fetching more per miss costs nothing; a box whose
// 128-byte rows are 256-byte pieces' halves, read apart, makes L2 look the
// other half up again: attention decode's caches take 128).
struct TensorMapDesc {
  DType dtype = DType::f32;                    // any but e2m1 (pass packed pairs as u8)
  DevicePtr address = 0;                       // global base, 16-byte aligned
  std::vector<std::uint64_t> dims;             // rank 1..5, innermost (contiguous) first, each 1..2^32
  std::vector<std::uint64_t> strides_bytes;    // rank-1 entries: byte stride of dims[1..], each a multiple of 16, < 2^40
  std::vector<std::uint32_t> box;              // box extent per dim, 1..256; box[0]*element bytes a multiple of 16
  std::vector<std::uint32_t> element_strides;  // empty = all 1; else rank entries, each 1..8
  TensorMapSwizzle swizzle = TensorMapSwizzle::none;  // with a swizzle, box[0]*element bytes <= its span
  TensorMapL2Promotion l2_promotion = TensorMapL2Promotion::b256;
};

// 128 bytes, 64-byte aligned, as the driver's CUtensorMap; opaque.
struct alignas(64) TensorMap {
  std::array<std::byte, 128> bytes{};
};
static_assert(sizeof(TensorMap) == 128 && alignof(TensorMap) == 64);

// The bytes of one element of `dtype` in a tensor map; RuntimeError for e2m1,
// which TMA has no 4-bit type for.
std::uint32_t tensor_map_element_bytes(DType dtype);

// Checks every rule of TensorMapDesc (RuntimeError naming the field, its
// value, the rule and what is accepted), then has the backend encode it.
void check_tensor_map(const TensorMapDesc& desc);
TensorMap make_tensor_map(const Device& device, const TensorMapDesc& desc);

}  // namespace warpforge::runtime
