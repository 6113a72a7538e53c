// The simulator's encoding of a TMA tensor map (runtime/tensor_map.hpp). The
// hardware's format is undocumented, so the simulator writes its own into the
// same 128 bytes, which its cp.async.bulk.tensor decodes; a map that was not
// written by encode_tensor_map (garbage, a map from the CUDA driver, a
// corrupted copy) fails the magic number or the checksum and is refused.
//
// Layout, little-endian:
//   [0, 8)     magic "WFSIMTM1"
//   [8]        version (1)    [9] rank 1..5   [10] runtime::DType   [11] TensorMapSwizzle
//   [12, 16)   zero
//   [16, 24)   global address
//   [24, 64)   dims[5]                  (u64; unused entries 0)
//   [64, 96)   strides_bytes[4]         (u64, of dims[1..]; unused entries 0)
//   [96, 106)  box[5]                   (u16; unused entries 0)
//   [106, 111) element_strides[5]       (u8, 1..8; unused entries 0)
//   [111, 124) zero
//   [124, 128) FNV-1a 32-bit hash of bytes [0, 124)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::sim {

// A decoded map, with every dimension's byte stride (strides[0] is the
// element size) and the swizzle span in bytes (0, 32, 64, 128).
struct TensorMapInfo {
  std::uint32_t rank = 0;
  runtime::DType dtype = runtime::DType::u8;
  std::uint32_t element_bytes = 0;
  std::uint64_t address = 0;
  std::uint64_t dims[5] = {};
  std::uint64_t strides[5] = {};
  std::uint32_t box[5] = {};
  std::uint32_t element_strides[5] = {};
  std::uint32_t swizzle_bytes = 0;
};

// `desc` has passed runtime::check_tensor_map.
runtime::TensorMap encode_tensor_map(const runtime::TensorMapDesc& desc);

// The fields tensormap.replace writes (PTX ISA 9.7.9.27), in its order.
enum class TensorMapField : std::uint8_t {
  global_address,
  rank,
  box_dim,
  global_dim,
  global_stride,
  element_stride,
  elemtype,
  interleave_layout,
  swizzle_mode,
  swizzle_atomicity,
  fill_mode
};

// tensormap.replace of `field` (dimension `ordinal` for the per-dimension
// ones) with `value`, in the ISA's encoding of the values, on the 128 bytes
// at `bytes`: a simulator map, or 128 zero bytes, which start a new one (how
// kernels build a map from nothing, Triton's tl.make_tensor_descriptor).
// Returns "" or says why the bytes or the value are refused; the map is
// checked as a whole when a copy uses it.
std::string replace_tensor_map_field(std::byte* bytes, TensorMapField field, std::uint32_t ordinal,
                                     std::uint64_t value);

// Decodes 128 bytes; returns "" and fills `out`, or says why they are not a
// simulator tensor map.
std::string decode_tensor_map(const std::byte* bytes, TensorMapInfo& out);

}  // namespace warpforge::sim
