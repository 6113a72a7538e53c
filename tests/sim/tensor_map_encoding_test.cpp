// The simulator's tensor-map encoding (sim/tensor_map_encoding.hpp): what
// make_tensor_map on Device::sim() writes decodes to the description, and
// bytes it did not write are refused with the reason.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "../../src/sim/tensor_map_encoding.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::sim {
namespace {

using runtime::DType;
using runtime::TensorMapSwizzle;

TEST(TensorMapEncoding, RoundTripsEveryField) {
  const runtime::TensorMapDesc desc{.dtype = DType::f16,
                                    .address = 0x1000'0000'0100,
                                    .dims = {96, 5, 1ull << 32, 2, 3},
                                    .strides_bytes = {192, 960, 1ull << 39, 4096},
                                    .box = {32, 256, 1, 2, 3},
                                    .element_strides = {1, 2, 3, 4, 8},
                                    .swizzle = TensorMapSwizzle::b64};
  const runtime::TensorMap map = runtime::make_tensor_map(runtime::Device::sim(), desc);
  TensorMapInfo t;
  ASSERT_EQ(decode_tensor_map(map.bytes.data(), t), "");
  EXPECT_EQ(t.rank, 5u);
  EXPECT_EQ(t.dtype, DType::f16);
  EXPECT_EQ(t.element_bytes, 2u);
  EXPECT_EQ(t.address, desc.address);
  EXPECT_EQ(t.swizzle_bytes, 64u);
  EXPECT_EQ(t.strides[0], 2u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(t.dims[i], desc.dims[i]) << i;
    if (i > 0) {
      EXPECT_EQ(t.strides[i], desc.strides_bytes[i - 1]) << i;
    }
    EXPECT_EQ(t.box[i], desc.box[i]) << i;
    EXPECT_EQ(t.element_strides[i], desc.element_strides[i]) << i;
  }
}

TEST(TensorMapEncoding, DefaultsElementStridesToOneAndLeavesUnusedDimsZero) {
  const runtime::TensorMap map = encode_tensor_map(
      {.dtype = DType::e5m2, .address = 0x100, .dims = {33}, .strides_bytes = {}, .box = {16}});
  TensorMapInfo t;
  ASSERT_EQ(decode_tensor_map(map.bytes.data(), t), "");
  EXPECT_EQ(t.rank, 1u);
  EXPECT_EQ(t.element_strides[0], 1u);
  EXPECT_EQ(t.swizzle_bytes, 0u);
  EXPECT_EQ(t.dims[1], 0u);
  EXPECT_EQ(t.box[1], 0u);
}

TEST(TensorMapEncoding, RefusesBytesItDidNotWrite) {
  runtime::TensorMap map = encode_tensor_map(
      {.dtype = DType::f32, .address = 0x100, .dims = {8, 8}, .strides_bytes = {32}, .box = {4, 4}});
  TensorMapInfo t;
  runtime::TensorMap garbage;
  for (std::size_t i = 0; i < garbage.bytes.size(); ++i) garbage.bytes[i] = std::byte(i * 7 + 3);
  EXPECT_EQ(decode_tensor_map(garbage.bytes.data(), t),
            "it does not start with the simulator's tensor-map magic \"WFSIMTM1\" (a map made by make_tensor_map "
            "on Device::sim() does)");
  map.bytes[30] ^= std::byte{1};  // dims[0]
  EXPECT_EQ(decode_tensor_map(map.bytes.data(), t),
            "its checksum does not match its contents (the map was modified after make_tensor_map)");
}

// Rewrites the checksum (FNV-1a, 32-bit, of bytes [0, 124), as the format
// documents) after a test changed a field, to reach the checks behind it.
void reseal(runtime::TensorMap& map) {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < 124; ++i) h = (h ^ static_cast<std::uint8_t>(map.bytes[i])) * 16777619u;
  std::memcpy(&map.bytes[124], &h, 4);
}

TEST(TensorMapEncoding, RefusesFieldsOutOfRangeBehindAValidChecksum) {
  const runtime::TensorMap good = encode_tensor_map(
      {.dtype = DType::f32, .address = 0x100, .dims = {8, 8}, .strides_bytes = {32}, .box = {4, 4}});
  const std::vector<std::tuple<std::size_t, std::uint8_t, std::string>> cases = {
      {8, 2, "its version is not 1"},
      {9, 0, "its rank 0 is not 1..5"},
      {9, 6, "its rank 6 is not 1..5"},
      {10, static_cast<std::uint8_t>(DType::e2m1), "its element type 5 is not one a tensor map holds"},
      {11, 4, "its swizzle mode 4 is not 0..3"},
      {96 + 2, 0, "dimension 1 (size 8, box 0, element stride 1) is out of range"},
      {106, 9, "dimension 0 (size 8, box 4, element stride 9) is out of range"},
  };
  for (const auto& [offset, value, message] : cases) {
    runtime::TensorMap map = good;
    map.bytes[offset] = std::byte{value};
    reseal(map);
    TensorMapInfo t;
    EXPECT_EQ(decode_tensor_map(map.bytes.data(), t), message) << "byte " << offset;
  }
}

}  // namespace
}  // namespace warpforge::sim
