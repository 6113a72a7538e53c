// Several simulators in one process stand for a machine of several GPUs
// (Device::sim() makes another device each call): ops built and run on them
// from several host threads at once give the reference's results, each
// device is named apart from the others, and an op built for one device
// refuses another's tensors by name. tests/gpu runs the same on two GPUs.
#include <gtest/gtest.h>

#include "several_devices_support.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {
namespace {

TEST(SeveralDevices, EachSimulatorIsADeviceNamedApart) {
  const runtime::Device a = runtime::Device::sim(), b = runtime::Device::sim();
  EXPECT_FALSE(a == b);
  EXPECT_NE(a.describe(), b.describe());
  EXPECT_EQ(a.describe(), "simulator " + std::to_string(a.properties().ordinal));
  EXPECT_EQ(b.properties().ordinal, a.properties().ordinal + 1);
}

TEST(SeveralDevices, ThreadsOnSeveralDevicesRunOpsAtOnce) {
  const std::vector<runtime::Device> devices = {runtime::Device::sim(), runtime::Device::sim()};
  AtOnce plan;
  plan.threads_per_device = 3;
  plan.shape.m = 40, plan.shape.n = 24, plan.shape.k = 96;
  EXPECT_EQ(run_on_devices_at_once(devices, plan), std::vector<std::string>{});
}

TEST(SeveralDevices, AnOpBuiltForOneDeviceRefusesAnothersTensors) {
  const runtime::Device built = runtime::Device::sim(), other = runtime::Device::sim();
  const std::string why = refusal_across_devices(built, other);
  for (const char* name : {"A", "B", "SFA", "SFB", "C", "amax"})
    EXPECT_NE(why.find(std::string(name) + " is on " + other.describe() + ": GemmAmax was built for " +
                       built.describe()),
              std::string::npos)
        << why;
  EXPECT_EQ(refusal_across_devices(built, built), "");
}

}  // namespace
}  // namespace warpforge::ops::testing
