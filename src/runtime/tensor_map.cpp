#include "warpforge/runtime/tensor_map.hpp"

#include <string>

#include "warpforge/error.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::runtime {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw RuntimeError("tensor map: " + what); }

std::string list(const auto& values) {
  std::string s = "{";
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "}";
}

}  // namespace

std::uint32_t swizzle_bytes(TensorMapSwizzle swizzle) {
  switch (swizzle) {
    case TensorMapSwizzle::none: return 0;
    case TensorMapSwizzle::b32: return 32;
    case TensorMapSwizzle::b64: return 64;
    case TensorMapSwizzle::b128: return 128;
  }
  return 0;
}

std::uint32_t tensor_map_element_bytes(DType dtype) {
  // CUtensorMapDataType has no 4-bit type (CUDA Driver API 6.30).
  if (dtype == DType::e2m1)
    refuse("dtype e2m1 has no tensor-map element type; describe packed e2m1 pairs as u8 (dims[0] in bytes)");
  return static_cast<std::uint32_t>(bits(dtype) / 8);
}

// The rules are cuTensorMapEncodeTiled's (CUDA Driver API 6.30) for
// CU_TENSOR_MAP_INTERLEAVE_NONE, checked here so that both backends refuse
// the same descriptions with a message that names the field.
void check_tensor_map(const TensorMapDesc& d) {
  const std::uint32_t elem = tensor_map_element_bytes(d.dtype);
  const std::size_t rank = d.dims.size();
  if (rank < 1 || rank > 5) refuse("rank " + std::to_string(rank) + " (dims " + list(d.dims) + ") is not 1..5");
  if (d.address == 0 || d.address % 16 != 0)
    refuse("address " + std::to_string(d.address) + " is not a nonzero multiple of 16 bytes");
  for (std::size_t i = 0; i < rank; ++i)
    if (d.dims[i] < 1 || d.dims[i] > (1ull << 32))
      refuse("dims[" + std::to_string(i) + "] = " + std::to_string(d.dims[i]) + " is not in 1..2^32");
  if (d.strides_bytes.size() != rank - 1)
    refuse("strides_bytes has " + std::to_string(d.strides_bytes.size()) + " entries " + list(d.strides_bytes) +
           "; a rank-" + std::to_string(rank) + " map takes " + std::to_string(rank - 1) +
           " (the byte strides of dims[1..])");
  for (std::size_t i = 0; i + 1 < rank; ++i) {
    const std::uint64_t s = d.strides_bytes[i];
    if (s % 16 != 0 || s >= (1ull << 40))
      refuse("strides_bytes[" + std::to_string(i) + "] = " + std::to_string(s) +
             " is not a multiple of 16 bytes below 2^40");
  }
  if (d.box.size() != rank)
    refuse("box has " + std::to_string(d.box.size()) + " entries " + list(d.box) + "; a rank-" +
           std::to_string(rank) + " map takes " + std::to_string(rank));
  for (std::size_t i = 0; i < rank; ++i)
    if (d.box[i] < 1 || d.box[i] > 256)
      refuse("box[" + std::to_string(i) + "] = " + std::to_string(d.box[i]) + " is not in 1..256");
  const std::uint64_t inner_bytes = std::uint64_t{d.box[0]} * elem;
  if (inner_bytes % 16 != 0)
    refuse("box[0] = " + std::to_string(d.box[0]) + " elements of " + std::to_string(elem) + " bytes is " +
           std::to_string(inner_bytes) + " bytes, not a multiple of 16");
  if (!d.element_strides.empty()) {
    if (d.element_strides.size() != rank)
      refuse("element_strides has " + std::to_string(d.element_strides.size()) + " entries " +
             list(d.element_strides) + "; give none (all 1) or " + std::to_string(rank));
    for (std::size_t i = 0; i < rank; ++i)
      if (d.element_strides[i] < 1 || d.element_strides[i] > 8)
        refuse("element_strides[" + std::to_string(i) + "] = " + std::to_string(d.element_strides[i]) +
               " is not in 1..8");
  }
  if (const std::uint32_t span = swizzle_bytes(d.swizzle); span != 0 && inner_bytes > span)
    refuse("box[0] = " + std::to_string(d.box[0]) + " elements is " + std::to_string(inner_bytes) +
           " bytes, more than the " + std::to_string(span) + "-byte swizzle span; use a box of at most " +
           std::to_string(span / elem) + " elements or a wider swizzle");
}

TensorMap make_tensor_map(const Device& device, const TensorMapDesc& desc) {
  check_tensor_map(desc);
  return device.backend().encode_tensor_map(desc);
}

// The default for backends that cannot build tensor maps.
TensorMap DeviceBackend::encode_tensor_map(const TensorMapDesc&) {
  throw RuntimeError("tensor map: device '" + properties().name +
                     "' cannot encode tensor maps (the CUDA backend on compute capability 9.0+ and the "
                     "simulator can)");
}

}  // namespace warpforge::runtime
