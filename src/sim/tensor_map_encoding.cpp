#include "tensor_map_encoding.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

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

std::string replace_tensor_map_field(std::byte* b, TensorMapField field, std::uint32_t ordinal,
                                     std::uint64_t value) {
  if (std::memcmp(b, kMagic, sizeof kMagic) != 0) {
    if (std::any_of(b, b + 128, [](std::byte x) { return x != std::byte{0}; }))
      return "the 128 bytes at the address are neither a simulator tensor map nor zeros (a new map starts "
             "from zeros)";
    std::memcpy(b, kMagic, sizeof kMagic);
    put<std::uint8_t>(b + 8, kVersion);
  } else if (get<std::uint32_t>(b + kHashed) != fnv1a(b, kHashed)) {
    return "its checksum does not match its contents (the map was modified other than by tensormap.replace)";
  }
  const auto in_dimension = [&](std::uint32_t count) { return ordinal < count; };
  const std::string what = "ordinal " + std::to_string(ordinal) + ", value " + std::to_string(value);
  switch (field) {
    case TensorMapField::global_address:
      if (value % 16 != 0) return "a global address must be 16-byte aligned (" + what + ")";
      put<std::uint64_t>(b + 16, value);
      break;
    case TensorMapField::rank:  // the rank less one
      if (value > 4) return "the rank field holds the rank less one, 0..4 (" + what + ")";
      put<std::uint8_t>(b + 9, static_cast<std::uint8_t>(value + 1));
      break;
    case TensorMapField::box_dim:
      if (!in_dimension(5) || value < 1 || value > 256) return "box_dim takes dimensions 0..4 and sizes 1..256 (" + what + ")";
      put<std::uint16_t>(b + 96 + 2 * ordinal, static_cast<std::uint16_t>(value));
      break;
    case TensorMapField::global_dim:
      if (!in_dimension(5) || value < 1 || value > (1ull << 32))
        return "global_dim takes dimensions 0..4 and sizes 1..2^32 (" + what + ")";
      put<std::uint64_t>(b + 24 + 8 * ordinal, value);
      break;
    case TensorMapField::global_stride:  // ordinal i: the stride of dimension i + 1, in bytes
      if (!in_dimension(4) || value % 16 != 0 || value >= (1ull << 40))
        return "global_stride takes ordinals 0..3 and byte strides that are multiples of 16 below 2^40 (" + what + ")";
      put<std::uint64_t>(b + 64 + 8 * ordinal, value);
      break;
    case TensorMapField::element_stride:
      if (!in_dimension(5) || value < 1 || value > 8)
        return "element_stride takes dimensions 0..4 and strides 1..8 (" + what + ")";
      put<std::uint8_t>(b + 106 + ordinal, static_cast<std::uint8_t>(value));
      break;
    case TensorMapField::elemtype: {
      // The ISA's element types (9.7.9.27, table "tensormap.replace elemtype"):
      // u8, u16, u32, s32, u64, s64, f16, f32, f32.ftz, f64, bf16, tf32,
      // tf32.ftz, then the 4- and 6-bit types. A copy only moves bytes, so
      // each is held as a DType of its width; the flushing and rounding types
      // are refused.
      using D = runtime::DType;
      constexpr D kTypes[] = {D::u8, D::i16, D::u32, D::i32, D::u64, D::i64, D::f16, D::f32};
      D type;
      if (value < std::size(kTypes)) type = kTypes[value];
      else if (value == 9) type = D::f64;
      else if (value == 10) type = D::bf16;
      else return "element type " + std::to_string(value) + " (f32.ftz, tf32 and the sub-byte types) is not simulated";
      put<std::uint8_t>(b + 10, static_cast<std::uint8_t>(type));
      break;
    }
    case TensorMapField::swizzle_mode:  // none, 32, 64, 128 bytes
      if (value > 3) return "swizzle mode " + std::to_string(value) + " is not simulated (0..3: none, 32, 64, 128 bytes)";
      put<std::uint8_t>(b + 11, static_cast<std::uint8_t>(value));
      break;
    case TensorMapField::interleave_layout:
    case TensorMapField::swizzle_atomicity:
    case TensorMapField::fill_mode:
      // No interleave, 16-byte swizzle atoms, zeros outside the tensor: what
      // every simulator map has (runtime/tensor_map.hpp).
      if (value != 0)
        return "only the value 0 of interleave_layout, swizzle_atomicity and fill_mode is simulated (no "
               "interleave, 16-byte atoms, zero fill)";
      break;
  }
  put<std::uint32_t>(b + kHashed, fnv1a(b, kHashed));
  return "";
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
