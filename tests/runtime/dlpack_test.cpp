#include <gtest/gtest.h>

#include "fake_backend.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/dlpack.hpp"

namespace warpforge::runtime {
namespace {

using testing::FakeBackend;
using Shape = std::vector<std::int64_t>;

struct Code {
  DType dtype;
  std::uint8_t code, bits;
};

TEST(DlpackDType, UsesDlpackCodes) {
  const Code expected[] = {
      {DType::f32, kDLFloat, 32}, {DType::f16, kDLFloat, 16}, {DType::f64, kDLFloat, 64},
      {DType::bf16, kDLBfloat, 16}, {DType::i8, kDLInt, 8},     {DType::i16, kDLInt, 16},
      {DType::i32, kDLInt, 32},   {DType::i64, kDLInt, 64},   {DType::u8, kDLUInt, 8},
      {DType::u32, kDLUInt, 32},  {DType::u64, kDLUInt, 64},
      // DLPack 1.1 codes, absent from the 0.6 header.
      {DType::e4m3, 10, 8}, {DType::e5m2, 12, 8}, {DType::e8m0, 14, 8}, {DType::e2m1, 17, 4},
  };
  for (const Code& c : expected) {
    const DLDataType t = to_dlpack(c.dtype);
    EXPECT_EQ(t.code, c.code) << name(c.dtype);
    EXPECT_EQ(t.bits, c.bits) << name(c.dtype);
    EXPECT_EQ(t.lanes, 1) << name(c.dtype);
    EXPECT_EQ(dtype_from_dlpack(t), c.dtype);
  }
}

TEST(DlpackDType, RefusesTypesWithoutAWarpforgeDType) {
  for (DLDataType t : {DLDataType{kDLComplex, 64, 1}, DLDataType{kDLFloat, 32, 4}, DLDataType{kDLUInt, 16, 1}}) {
    try {
      dtype_from_dlpack(t);
      ADD_FAILURE() << "accepted code " << int(t.code);
    } catch (const RuntimeError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("DLPack dtype (code " + std::to_string(t.code) + ", bits " +
                                                std::to_string(t.bits) + ", lanes " + std::to_string(t.lanes) +
                                                ") has no warpforge dtype; accepted: ",
                                            0),
                0u)
          << e.what();
    }
  }
}

class Dlpack : public ::testing::Test {
 protected:
  std::shared_ptr<FakeBackend> fake = std::make_shared<FakeBackend>();
  Device device{fake};
};

TEST_F(Dlpack, ExportsMetadataAndKeepsTheStorageAlive) {
  DLManagedTensor* m;
  DevicePtr base;
  {
    Tensor t = Tensor::empty(device, DType::bf16, {4, 6});
    base = t.data();
    Tensor strided(TensorView(device, t.data(), DType::bf16, {4, 3}, {6, 2}, 2), t.storage());
    m = to_dlpack(strided);
  }
  EXPECT_EQ(fake->frees, 0);
  const DLTensor& d = m->dl_tensor;
  EXPECT_EQ(reinterpret_cast<DevicePtr>(d.data), base);
  EXPECT_EQ(d.device.device_type, kDLCUDA);
  EXPECT_EQ(d.device.device_id, 0);
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.dtype.code, kDLBfloat);
  EXPECT_EQ(Shape(d.shape, d.shape + 2), (Shape{4, 3}));
  EXPECT_EQ(Shape(d.strides, d.strides + 2), (Shape{6, 2}));
  EXPECT_EQ(d.byte_offset, 2u);
  m->deleter(m);
  EXPECT_EQ(fake->frees, 1);
}

TEST_F(Dlpack, RoundTripsThroughImport) {
  Tensor t = Tensor::empty(device, DType::e4m3, {2, 3, 5});
  Tensor back = from_dlpack(to_dlpack(t), device);
  EXPECT_EQ(back.dtype(), DType::e4m3);
  EXPECT_EQ(back.shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(back.strides(), (Shape{15, 5, 1}));
  EXPECT_EQ(back.address(), t.address());
  EXPECT_EQ(back.device(), device);
}

// A foreign producer's tensor: counts its deleter calls.
struct Foreign {
  Shape shape;
  int deleted = 0;
  DLManagedTensor managed{};
  explicit Foreign(Shape s, DLDevice where, DLDataType type,
                   void* data = reinterpret_cast<void*>(std::uintptr_t{0x20000}))
      : shape(std::move(s)) {
    managed.dl_tensor.data = data;
    managed.dl_tensor.device = where;
    managed.dl_tensor.ndim = static_cast<int>(shape.size());
    managed.dl_tensor.dtype = type;
    managed.dl_tensor.shape = shape.data();
    managed.dl_tensor.strides = nullptr;  // compact row-major
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<Foreign*>(self->manager_ctx)->deleted; };
  }
};

TEST_F(Dlpack, ImportsCompactTensorsAndReleasesThemOnce) {
  Foreign f({3, 4}, {kDLCUDA, 0}, {17, 4, 1});
  {
    Tensor t = from_dlpack(&f.managed, device);
    EXPECT_EQ(t.dtype(), DType::e2m1);
    EXPECT_EQ(t.strides(), (Shape{4, 1}));
    EXPECT_EQ(t.extent_bytes(), 6u);
    Tensor copy = t;
    EXPECT_EQ(f.deleted, 0);
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST_F(Dlpack, RefusesATensorOfAnotherDeviceAndReleasesIt) {
  Foreign f({3}, {kDLCUDA, 1}, {kDLFloat, 32, 1});
  try {
    from_dlpack(&f.managed, device);
    ADD_FAILURE() << "a tensor of device 1 was imported on device 0";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(),
                 "from_dlpack: the tensor lives on DLPack device (device_type 2, device_id 1), not on the requested "
                 "device (device_type 2, device_id 0)");
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST_F(Dlpack, RefusesACpuTensorWithoutADevice) {
  Foreign f({3}, {kDLCPU, 0}, {kDLFloat, 32, 1});
  try {
    from_dlpack(&f.managed);
    ADD_FAILURE() << "a CPU tensor was imported";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(),
                 "from_dlpack without a device takes kDLCUDA tensors only; this one is on (device_type 1, device_id "
                 "0); pass the Device it belongs to");
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST(DlpackHost, MapsHostMemoryIntoTheSimulatorWithoutACopy) {
  Device sim = Device::sim();
  // Host floats at an address 4 bytes past a 256-byte boundary: the mapping
  // keeps that offset, so kernels see the host memory's alignment.
  alignas(256) float storage[8] = {};
  float* host = storage + 1;
  for (int i = 0; i < 6; ++i) host[i] = 1.5f * static_cast<float>(i + 1);
  Foreign f({2, 3}, {kDLCPU, 0}, {kDLFloat, 32, 1}, host);
  DevicePtr address = 0;
  {
    Tensor t = from_dlpack(&f.managed, sim);
    address = t.address();
    EXPECT_EQ(address % 256, 4u);
    std::vector<float> seen(6, -1.0f);
    t.copy_to_host(seen.data(), 24);
    EXPECT_EQ(seen, (std::vector<float>{1.5f, 3.0f, 4.5f, 6.0f, 7.5f, 9.0f}));
    const std::vector<float> written{-1, -2, -3, -4, -5, -6};
    t.copy_from_host(written.data(), 24);
    EXPECT_EQ(host[5], -6.0f);  // the producer's own memory changed
    EXPECT_EQ(f.deleted, 0);
  }
  EXPECT_EQ(f.deleted, 1);
  // Unmapped with the last Tensor: the address no longer reaches the host array.
  EXPECT_THROW(sim.backend().copy_to_host(storage, address, 4, nullptr), SimError);
}

TEST_F(Dlpack, RefusesHostMemoryOnAGpu) {
  float x[3] = {};
  Foreign f({3}, {kDLCPU, 0}, {kDLFloat, 32, 1}, x);
  try {
    from_dlpack(&f.managed, device);
    ADD_FAILURE() << "host memory was imported on a GPU";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("lives on DLPack device (device_type 1, device_id 0)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST_F(Dlpack, RefusesTooManyDimensions) {
  Foreign f(Shape(9, 1), {kDLCUDA, 0}, {kDLFloat, 32, 1});
  try {
    from_dlpack(&f.managed, device);
    ADD_FAILURE() << "a rank-9 tensor was imported";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "from_dlpack: tensor of rank 9 refused: at most 8 dimensions");
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST_F(Dlpack, RefusesANullTensor) {
  try {
    from_dlpack(nullptr, device);
    ADD_FAILURE() << "a null tensor was imported";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "from_dlpack given a null DLManagedTensor");
  }
}

}  // namespace
}  // namespace warpforge::runtime
