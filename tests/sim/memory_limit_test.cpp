// The simulator's device memory is host memory: a Buffer past what is free
// (the host's available memory, or SimOptions::memory_bytes) is refused
// before anything is allocated, naming the size and what is free.
#include <gtest/gtest.h>

#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::sim {
namespace {

TEST(SimMemory, ABufferLargerThanTheHostIsRefused) {
  const runtime::Device dev = runtime::Device::sim();
  try {
    runtime::Buffer huge(dev, std::size_t{1} << 50);
    ADD_FAILURE() << "a 1 PiB buffer was allocated";
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(
        msg.rfind("a buffer of 1125899906842624 bytes (1048576.0 GiB) does not fit on warpforge "
                  "simulator: ",
                  0),
        0u)
        << msg;
    EXPECT_NE(msg.find(" bytes ("), std::string::npos) << msg;
    EXPECT_NE(msg.find(" GiB) free"), std::string::npos) << msg;
  }
}

TEST(SimMemory, MemoryBytesLimitsTheLiveAllocations) {
  const runtime::Device dev(make_backend({.memory_bytes = 1 << 20}));
  EXPECT_EQ(dev.backend().free_bytes(), 1u << 20);
  {
    runtime::Buffer most(dev, 768 << 10);
    EXPECT_EQ(dev.backend().free_bytes(), 256u << 10);
    try {
      runtime::Buffer more(dev, 512 << 10);
      ADD_FAILURE() << "512 KiB were allocated with 256 KiB free";
    } catch (const RuntimeError& e) {
      EXPECT_STREQ(
          e.what(),
          "a buffer of 524288 bytes (512.0 KiB) does not fit on warpforge simulator: 262144 "
          "bytes (256.0 KiB) free");
    }
    runtime::Buffer rest(dev, 256 << 10);  // exactly what is left
    EXPECT_EQ(dev.backend().free_bytes(), 0u);
  }
  EXPECT_EQ(dev.backend().free_bytes(), 1u << 20);  // freed with the buffers
}

}  // namespace
}  // namespace warpforge::sim
