// make_tensor_map's checks (the rules of cuTensorMapEncodeTiled, CUDA Driver
// API 6.30), each refusal with its message, and the default backend refusal.
// The encodings themselves are tested with their backends (tests/sim,
// tests/cuda_backend).
#include <gtest/gtest.h>

#include <memory>

#include "fake_backend.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::runtime {
namespace {

// A valid 2-D bf16 map: a 100 x 64 row-major matrix, 64 x 32 boxes, 128B swizzle.
TensorMapDesc valid() {
  return {.dtype = DType::bf16,
          .address = 0x10000,
          .dims = {64, 100},
          .strides_bytes = {128},
          .box = {64, 32},
          .swizzle = TensorMapSwizzle::b128};
}

void expect_refused(const TensorMapDesc& desc, const std::string& message) {
  try {
    check_tensor_map(desc);
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "tensor map: " + message);
  }
}

TEST(TensorMap, AcceptsTheDriversRulesAtTheirLimits) {
  EXPECT_NO_THROW(check_tensor_map(valid()));
  TensorMapDesc d{.dtype = DType::u8,
                  .address = 16,
                  .dims = {1ull << 32, 1, 1, 1, 7},
                  .strides_bytes = {16, 16, (1ull << 40) - 16, 32},
                  .box = {256, 1, 1, 1, 256},
                  .element_strides = {1, 8, 1, 1, 8}};
  EXPECT_NO_THROW(check_tensor_map(d));
  EXPECT_EQ(tensor_map_element_bytes(DType::f32), 4u);
  EXPECT_EQ(tensor_map_element_bytes(DType::e4m3), 1u);
  EXPECT_EQ(swizzle_bytes(TensorMapSwizzle::b64), 64u);
}

TEST(TensorMap, RefusesE2m1) {
  TensorMapDesc d = valid();
  d.dtype = DType::e2m1;
  expect_refused(d, "dtype e2m1 has no tensor-map element type; describe packed e2m1 pairs as u8 (dims[0] in bytes)");
}

TEST(TensorMap, RefusesRanksOutside1To5) {
  TensorMapDesc d = valid();
  d.dims = {};
  expect_refused(d, "rank 0 (dims {}) is not 1..5");
  d.dims = {1, 2, 3, 4, 5, 6};
  expect_refused(d, "rank 6 (dims {1, 2, 3, 4, 5, 6}) is not 1..5");
}

TEST(TensorMap, RefusesNullAndMisalignedAddresses) {
  TensorMapDesc d = valid();
  d.address = 0;
  expect_refused(d, "address 0 is not a nonzero multiple of 16 bytes");
  d.address = 0x10008;
  expect_refused(d, "address 65544 is not a nonzero multiple of 16 bytes");
}

TEST(TensorMap, RefusesDimsOutside1To2Pow32) {
  TensorMapDesc d = valid();
  d.dims[1] = 0;
  expect_refused(d, "dims[1] = 0 is not in 1..2^32");
  d.dims[1] = (1ull << 32) + 1;
  expect_refused(d, "dims[1] = 4294967297 is not in 1..2^32");
}

TEST(TensorMap, RefusesAWrongStrideCountAndBadStrides) {
  TensorMapDesc d = valid();
  d.strides_bytes = {128, 256};
  expect_refused(d, "strides_bytes has 2 entries {128, 256}; a rank-2 map takes 1 (the byte strides of dims[1..])");
  d.strides_bytes = {136};
  expect_refused(d, "strides_bytes[0] = 136 is not a multiple of 16 bytes below 2^40");
  d.strides_bytes = {1ull << 40};
  expect_refused(d, "strides_bytes[0] = 1099511627776 is not a multiple of 16 bytes below 2^40");
}

TEST(TensorMap, RefusesAWrongBoxCountAndBadBoxes) {
  TensorMapDesc d = valid();
  d.box = {64};
  expect_refused(d, "box has 1 entries {64}; a rank-2 map takes 2");
  d.box = {64, 0};
  expect_refused(d, "box[1] = 0 is not in 1..256");
  d.box = {64, 257};
  expect_refused(d, "box[1] = 257 is not in 1..256");
}

TEST(TensorMap, RefusesAnInnerBoxThatIsNotWholeSixteenByteChunks) {
  TensorMapDesc d = valid();
  d.swizzle = TensorMapSwizzle::none;
  d.box = {12, 32};
  expect_refused(d, "box[0] = 12 elements of 2 bytes is 24 bytes, not a multiple of 16");
}

TEST(TensorMap, RefusesBadElementStrides) {
  TensorMapDesc d = valid();
  d.element_strides = {1};
  expect_refused(d, "element_strides has 1 entries {1}; give none (all 1) or 2");
  d.element_strides = {1, 9};
  expect_refused(d, "element_strides[1] = 9 is not in 1..8");
  d.element_strides = {0, 1};
  expect_refused(d, "element_strides[0] = 0 is not in 1..8");
}

TEST(TensorMap, RefusesAnInnerBoxWiderThanTheSwizzleSpan) {
  TensorMapDesc d = valid();
  d.swizzle = TensorMapSwizzle::b64;
  expect_refused(d,
                 "box[0] = 64 elements is 128 bytes, more than the 64-byte swizzle span; use a box of at most 32 "
                 "elements or a wider swizzle");
  d.dtype = DType::f32;
  d.swizzle = TensorMapSwizzle::b128;
  expect_refused(d,
                 "box[0] = 64 elements is 256 bytes, more than the 128-byte swizzle span; use a box of at most 32 "
                 "elements or a wider swizzle");
}

TEST(TensorMap, MakeChecksBeforeTheBackendAndTheDefaultBackendRefuses) {
  Device device(std::make_shared<testing::FakeBackend>());
  TensorMapDesc bad = valid();
  bad.box = {64, 300};
  EXPECT_THROW(
      {
        try {
          make_tensor_map(device, bad);
        } catch (const RuntimeError& e) {
          EXPECT_STREQ(e.what(), "tensor map: box[1] = 300 is not in 1..256");
          throw;
        }
      },
      RuntimeError);
  try {
    make_tensor_map(device, valid());
    ADD_FAILURE() << "the fake backend encoded a tensor map";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(),
                 "tensor map: device 'Fake H100' cannot encode tensor maps (the CUDA backend on compute "
                 "capability 9.0+ and the simulator can)");
  }
}

}  // namespace
}  // namespace warpforge::runtime
