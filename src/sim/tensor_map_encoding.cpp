#include "tensor_map_encoding.hpp"

#include <cstring>

namespace warpforge::sim {
namespace {

constexpr char kMagic[8] = {'W', 'F', 'S', 'I', 'M', 'T', 'M', '1'};
constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kHashed = 124;

std::uint32_t fnv1a(const std::byte* p, std::size_t n) {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<std::uint8_t>(p[i])) * 16777619u;
  return h;
}

template <class T>
void put(std::byte* at, T v) {
  std::memcpy(at, &v, sizeof v);
}
template <class T>
T get(const std::byte* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

}  // namespace

runtime::TensorMap encode_tensor_map(const runtime::TensorMapDesc& d) {
  runtime::TensorMap map;
  std::byte* b = map.bytes.data();
  std::memcpy(b, kMagic, sizeof kMagic);
  const std::size_t rank = d.dims.size();
  put<std::uint8_t>(b + 8, kVersion);
  put<std::uint8_t>(b + 9, static_cast<std::uint8_t>(rank));
  put<std::uint8_t>(b + 10, static_cast<std::uint8_t>(d.dtype));
  put<std::uint8_t>(b + 11, static_cast<std::uint8_t>(d.swizzle));
  put<std::uint64_t>(b + 16, d.address);
  for (std::size_t i = 0; i < rank; ++i) {
    put<std::uint64_t>(b + 24 + 8 * i, d.dims[i]);
    if (i > 0) put<std::uint64_t>(b + 64 + 8 * (i - 1), d.strides_bytes[i - 1]);
    put<std::uint16_t>(b + 96 + 2 * i, static_cast<std::uint16_t>(d.box[i]));
    put<std::uint8_t>(b + 106 + i, static_cast<std::uint8_t>(d.element_strides.empty() ? 1 : d.element_strides[i]));
  }
  put<std::uint32_t>(b + kHashed, fnv1a(b, kHashed));
  return map;
}

std::string decode_tensor_map(const std::byte* b, TensorMapInfo& out) {
  if (std::memcmp(b, kMagic, sizeof kMagic) != 0)
    return "it does not start with the simulator's tensor-map magic \"WFSIMTM1\" (a map made by "
           "make_tensor_map on Device::sim() does)";
  if (get<std::uint32_t>(b + kHashed) != fnv1a(b, kHashed))
    return "its checksum does not match its contents (the map was modified after make_tensor_map)";
  if (get<std::uint8_t>(b + 8) != kVersion) return "its version is not 1";
  TensorMapInfo t;
  t.rank = get<std::uint8_t>(b + 9);
  const auto dtype = get<std::uint8_t>(b + 10);
  const auto swizzle = get<std::uint8_t>(b + 11);
  if (t.rank < 1 || t.rank > 5) return "its rank " + std::to_string(t.rank) + " is not 1..5";
  if (dtype > static_cast<std::uint8_t>(runtime::DType::f64) || dtype == static_cast<std::uint8_t>(runtime::DType::e2m1))
    return "its element type " + std::to_string(dtype) + " is not one a tensor map holds";
  if (swizzle > static_cast<std::uint8_t>(runtime::TensorMapSwizzle::b128))
    return "its swizzle mode " + std::to_string(swizzle) + " is not 0..3";
  t.dtype = static_cast<runtime::DType>(dtype);
  t.element_bytes = static_cast<std::uint32_t>(runtime::bits(t.dtype) / 8);
  t.swizzle_bytes = runtime::swizzle_bytes(static_cast<runtime::TensorMapSwizzle>(swizzle));
  t.address = get<std::uint64_t>(b + 16);
  t.strides[0] = t.element_bytes;
  for (std::uint32_t i = 0; i < t.rank; ++i) {
    t.dims[i] = get<std::uint64_t>(b + 24 + 8 * i);
    if (i > 0) t.strides[i] = get<std::uint64_t>(b + 64 + 8 * (i - 1));
    t.box[i] = get<std::uint16_t>(b + 96 + 2 * i);
    t.element_strides[i] = get<std::uint8_t>(b + 106 + i);
    if (t.dims[i] < 1 || t.box[i] < 1 || t.box[i] > 256 || t.element_strides[i] < 1 || t.element_strides[i] > 8)
      return "dimension " + std::to_string(i) + " (size " + std::to_string(t.dims[i]) + ", box " +
             std::to_string(t.box[i]) + ", element stride " + std::to_string(t.element_strides[i]) +
             ") is out of range";
  }
  out = t;
  return "";
}

}  // namespace warpforge::sim
