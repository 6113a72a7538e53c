// SimOptions::target: the GPU the simulator stands for, its target and the
// compute capability and shared memory limits of that GPU.
#include <gtest/gtest.h>

#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::sim {
namespace {

TEST(SimTarget, ReportsTheTargetsComputeCapabilityAndSharedMemory) {
  struct Case {
    ptx::Target target;
    int major, minor;
    std::size_t optin_kb, per_sm_kb;
  };
  for (const Case& c :
       {Case{ptx::Target::sm_80, 8, 0, 163, 164}, Case{ptx::Target::sm_89, 8, 9, 99, 100},
        Case{ptx::Target::sm_90a, 9, 0, 227, 228}, Case{ptx::Target::sm_100a, 10, 0, 227, 228}}) {
    const runtime::Device dev(make_backend({.target = c.target}));
    EXPECT_TRUE(dev.is_simulator());
    EXPECT_EQ(dev.target(), c.target);
    const auto& p = dev.properties();
    EXPECT_EQ(p.compute_capability_major, c.major) << ptx::name(c.target);
    EXPECT_EQ(p.compute_capability_minor, c.minor) << ptx::name(c.target);
    EXPECT_EQ(p.shared_bytes_per_block_optin, c.optin_kb * 1024) << ptx::name(c.target);
    EXPECT_EQ(p.shared_bytes_per_sm, c.per_sm_kb * 1024) << ptx::name(c.target);
    EXPECT_EQ(p.shared_bytes_per_block, 48u * 1024);
  }
}

TEST(SimTarget, DefaultsToSm90a) {
  EXPECT_EQ(runtime::Device::sim().target(), ptx::Target::sm_90a);
  EXPECT_EQ(runtime::Device::sim().properties().compute_capability_major, 9);
}

}  // namespace
}  // namespace warpforge::sim
