#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "fake_backend.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/event.hpp"
#include "warpforge/runtime/stream.hpp"

namespace warpforge::runtime {
namespace {

using testing::FakeBackend;

DeviceProperties with_cc(int major, int minor) {
  DeviceProperties p;
  p.name = "GPU";
  p.compute_capability_major = major;
  p.compute_capability_minor = minor;
  return p;
}

TEST(TargetFor, PicksTheTargetOfEachComputeCapability) {
  EXPECT_EQ(target_for(with_cc(8, 0)), ptx::Target::sm_80);
  EXPECT_EQ(target_for(with_cc(8, 6)), ptx::Target::sm_80);
  EXPECT_EQ(target_for(with_cc(8, 9)), ptx::Target::sm_89);
  EXPECT_EQ(target_for(with_cc(9, 0)), ptx::Target::sm_90a);
  EXPECT_EQ(target_for(with_cc(10, 0)), ptx::Target::sm_100a);
  EXPECT_EQ(target_for(with_cc(12, 0)), ptx::Target::sm_89);  // sm_100a code does not run on 12.0
}

TEST(TargetFor, RefusesGpusOlderThanAmpere) {
  DeviceProperties p = with_cc(7, 5);
  p.name = "Tesla T4";
  try {
    target_for(p);
    ADD_FAILURE() << "compute capability 7.5 accepted";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(),
                 "device 'Tesla T4' has compute capability 7.5; warpforge needs 8.0 (Ampere) or newer (targets "
                 "sm_80, sm_89, sm_90a, sm_100a)");
  }
}

TEST(CudaDevice, CountsZeroWithoutADriverAndRefusesClearly) {
  if (Device::cuda_count() > 0) GTEST_SKIP() << "a CUDA GPU is present; tests/gpu covers it";
  try {
    Device::cuda(0);
    ADD_FAILURE() << "Device::cuda(0) succeeded with no GPU";
  } catch (const CudaError& e) {
    // Either no libcuda.so.1 (this machine) or a driver without a usable GPU.
    EXPECT_NE(std::string(e.what()).find("Device::cuda needs an NVIDIA GPU"), std::string::npos) << e.what();
    EXPECT_TRUE(e.call() == "dlopen(libcuda.so.1)" || e.call() == "cuInit(0)") << e.call();
  }
}

// Asserts that `f` throws RuntimeError with exactly `message`.
void expect_refused(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(DeviceValue, RefusesANullBackend) {
  expect_refused([] { Device d(nullptr); }, "Device constructed from a null backend");
}

class BufferTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeBackend> fake = std::make_shared<FakeBackend>();
  Device device{fake};
};

TEST_F(BufferTest, CopiesFillsAndFrees) {
  {
    Buffer a = device.allocate(16);
    Buffer b(device, 16);
    const std::vector<std::uint32_t> values{1, 2, 3, 4};
    a.upload(std::span<const std::uint32_t>(values));
    b.copy_from(a, 16);
    EXPECT_EQ(b.download<std::uint32_t>(4), values);
    b.fill(0xFF);
    EXPECT_EQ(b.download<std::uint32_t>(4), std::vector<std::uint32_t>(4, 0xFFFFFFFFu));
    std::uint32_t third = 0;
    a.copy_to_host(&third, 4, 8);
    EXPECT_EQ(third, 3u);
  }
  EXPECT_EQ(fake->frees, 2);
  EXPECT_TRUE(fake->memory.empty());
}

TEST_F(BufferTest, MovesOwnership) {
  Buffer a(device, 64);
  const DevicePtr address = a.address();
  Buffer b = std::move(a);
  EXPECT_EQ(a.address(), 0u);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.address(), address);
  Buffer c(device, 8);
  c = std::move(b);  // frees c's own allocation
  EXPECT_EQ(fake->frees, 1);
  EXPECT_EQ(c.address(), address);
}

TEST_F(BufferTest, RefusesCopiesOutsideTheBuffer) {
  Buffer a(device, 16);
  std::uint8_t host[32] = {};
  try {
    a.copy_from_host(host, 12, 8);
    ADD_FAILURE() << "an out-of-range copy was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "copy to the device of 12 bytes at offset 8 does not fit in a buffer of 16 bytes");
  }
  Buffer small(device, 8);
  expect_refused([&] { small.copy_from(a, 16); },
                 "device-to-device copy of 16 bytes at offset 0 does not fit in a buffer of 8 bytes");
  Buffer elsewhere(Device(std::make_shared<FakeBackend>()), 16);
  expect_refused([&] { elsewhere.copy_from(a, 16); }, "device-to-device copy between buffers of two devices");
}

TEST_F(BufferTest, AZeroByteBufferAllocatesNothing) {
  Buffer empty(device, 0);
  EXPECT_EQ(empty.address(), 0u);
  EXPECT_TRUE(fake->memory.empty());
}

TEST_F(BufferTest, RefusesAStreamOfAnotherDevice) {
  Device other(std::make_shared<FakeBackend>());
  Stream stream(other);
  Buffer a(device, 4);
  std::uint32_t v = 1;
  try {
    a.copy_from_host(&v, 4, 0, &stream);
    ADD_FAILURE() << "a stream of another device was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "a copy was queued on a stream of another device");
  }
}

// The default, host-clock events of a synchronous backend.
TEST_F(BufferTest, HostEventsTimeTheWorkBetweenThem) {
  Stream stream(device);
  Event start(device), end(device);
  start.record(&stream);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  end.record(&stream);
  end.synchronize();
  const float ms = Event::elapsed_ms(start, end);
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 5000.0f);
}

TEST_F(BufferTest, RefusesEventsAcrossDevices) {
  Device other(std::make_shared<FakeBackend>());
  Stream foreign(other);
  Event here(device), there(other);
  expect_refused([&] { here.record(&foreign); }, "event recorded on a stream of another device");
  expect_refused([&] { Event::elapsed_ms(here, there); }, "elapsed time between events of two devices");
  EventHandle not_a_host_event;
  expect_refused([&] { fake->record(not_a_host_event, nullptr); }, "event was not created by this device's backend");
}

TEST_F(BufferTest, RefusesTheTimeOfAnUnrecordedEvent) {
  Event start(device), end(device);
  start.record();
  try {
    Event::elapsed_ms(start, end);
    ADD_FAILURE() << "an unrecorded event was timed";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "elapsed time asked of an event that was never recorded");
  }
}

}  // namespace
}  // namespace warpforge::runtime
