#include <gtest/gtest.h>

#include <numeric>

#include "fake_backend.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::runtime {
namespace {

using testing::FakeBackend;
using Shape = std::vector<std::int64_t>;

class TensorTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeBackend> fake = std::make_shared<FakeBackend>();
  Device device{fake};

  void expect_refused(const std::function<void()>& make, const std::string& message) {
    try {
      make();
      ADD_FAILURE() << "accepted; expected: " << message;
    } catch (const RuntimeError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
};

TEST(DType, KnowsNamesAndWidths) {
  EXPECT_EQ(name(DType::bf16), "bf16");
  EXPECT_EQ(bits(DType::e2m1), 4);
  EXPECT_EQ(bits(DType::e8m0), 8);
  EXPECT_EQ(bits(DType::f64), 64);
  for (int i = 0; i <= static_cast<int>(DType::f64); ++i)
    EXPECT_EQ(parse_dtype(name(static_cast<DType>(i))), static_cast<DType>(i));
  EXPECT_EQ(parse_dtype("f8"), std::nullopt);
}

TEST_F(TensorTest, DefaultsToContiguousRowMajor) {
  Buffer buffer(device, 2 * 3 * 4 * 2);
  TensorView t(buffer, DType::bf16, {2, 3, 4});
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.extent_bytes(), 48u);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.address(), buffer.address());
  EXPECT_EQ(t.describe(), "bf16[2, 3, 4] strides [12, 4, 1]");
}

TEST_F(TensorTest, MeasuresStridedExtents) {
  Buffer buffer(device, 4096);
  // A column-major 16x8 f32 matrix inside a padded 20-row allocation.
  TensorView t(buffer, DType::f32, {16, 8}, {1, 20}, 64);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.extent_bytes(), (15 + 7 * 20 + 1) * 4u);
  EXPECT_EQ(t.address(), buffer.address() + 64);
  // Size-1 dimensions do not break contiguity whatever their stride.
  EXPECT_TRUE(TensorView(buffer, DType::f32, {1, 8}, {99, 1}).is_contiguous());
}

TEST_F(TensorTest, RefusesAViewOutsideItsBuffer) {
  Buffer buffer(device, 100);
  expect_refused([&] { TensorView(buffer, DType::f32, {5, 5}, {}, 4); },
                 "tensor f32[5, 5] strides [5, 1] at byte offset 4 spans 104 bytes of a buffer of 100 bytes");
  expect_refused([&] { TensorView(buffer, DType::f32, {5, 2}, {10, 1}); },
                 "tensor f32[5, 2] strides [10, 1] at byte offset 0 spans 168 bytes of a buffer of 100 bytes");
}

TEST_F(TensorTest, RefusesBadLayouts) {
  Buffer buffer(device, 1024);
  expect_refused([&] { TensorView(buffer, DType::f32, Shape(9, 1)); },
                 "tensor of rank 9 refused: at most 8 dimensions");
  expect_refused([&] { TensorView(buffer, DType::f32, {4, 4}, {1}); },
                 "tensor with shape [4, 4] got 1 strides [1]; give one stride per dimension");
  expect_refused([&] { TensorView(buffer, DType::f32, {4, 4}, {-4, 1}); },
                 "tensor f32[4, 4] strides [-4, 1] refused: extents and strides must be non-negative");
  expect_refused([&] { TensorView(buffer, DType::f32, {4}, {}, 2); },
                 "tensor f32[4] strides [1] refused: byte offset 2 is not a multiple of the 4-byte element");
}

TEST_F(TensorTest, PacksE2m1TwoPerByte) {
  Buffer buffer(device, 64);
  TensorView t(buffer, DType::e2m1, {4, 5}, {6, 1});
  EXPECT_EQ(t.extent_bytes(), 12u);  // elements 0 .. 22, half a byte each
  EXPECT_EQ(TensorView(buffer, DType::e2m1, {3, 6}).extent_bytes(), 9u);
  EXPECT_EQ(TensorView(buffer, DType::e2m1, {7}).extent_bytes(), 4u);
  // Rows of odd length would start mid-byte, contiguous or not.
  expect_refused([&] { TensorView(buffer, DType::e2m1, {4, 5}); },
                 "tensor e2m1[4, 5] strides [5, 1] refused: e2m1 packs two elements per byte, so the last "
                 "dimension must have stride 1 and every other stride must be even");
  expect_refused([&] { TensorView(buffer, DType::e2m1, {4, 6}, {6, 2}); },
                 "tensor e2m1[4, 6] strides [6, 2] refused: e2m1 packs two elements per byte, so the last "
                 "dimension must have stride 1 and every other stride must be even");
}

TEST_F(TensorTest, CopiesWholeContiguousTensors) {
  Tensor t = Tensor::empty(device, DType::i32, {3, 4});
  std::vector<std::int32_t> in(12), out(12);
  std::iota(in.begin(), in.end(), -5);
  t.copy_from_host(in.data(), 48);
  t.copy_to_host(out.data(), 48);
  EXPECT_EQ(in, out);
  expect_refused([&] { t.copy_to_host(out.data(), 40); },
                 "copy_to_host of 40 bytes from tensor i32[3, 4] strides [4, 1] of 48 bytes");
  Buffer buffer(device, 256);
  TensorView transposed(buffer, DType::i32, {4, 3}, {1, 4});
  expect_refused([&] { transposed.copy_from_host(in.data(), 48); },
                 "copy_from_host needs a contiguous row-major tensor; got i32[4, 3] strides [1, 4], contiguous "
                 "strides are [3, 1]");
}

TEST_F(TensorTest, TensorsShareAndReleaseTheirStorage) {
  std::optional<Tensor> copy;
  {
    Tensor t = Tensor::empty(device, DType::f16, {8, 8});
    EXPECT_EQ(fake->memory.size(), 1u);
    EXPECT_EQ(fake->memory.begin()->second.size(), 128u);
    copy = t;
  }
  EXPECT_EQ(fake->frees, 0);  // the copy keeps it
  const TensorView& view = *copy;
  EXPECT_EQ(view.shape(), (Shape{8, 8}));
  copy.reset();
  EXPECT_EQ(fake->frees, 1);
}

}  // namespace
}  // namespace warpforge::runtime
