// The simulator's tensor-map encoding (sim/tensor_map_encoding.hpp): what
// make_tensor_map on Device::sim() writes decodes to the description, and
// bytes it did not write are refused with the reason.
#include <gtest/gtest.h>

#include <cstring>

#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/tensor_map_encoding.hpp"

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

}  // namespace
}  // namespace warpforge::sim
