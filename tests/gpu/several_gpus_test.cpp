// Two GPUs of one machine used at once from several host threads, as
// tests/ops/several_devices_test.cpp does with simulators: every result the
// reference's, an op bound to one GPU refusing the other's tensors by name,
// and the calling thread's current context (a framework's current device)
// left as it was. Skipped, saying so, with fewer than two GPUs.
#include "../ops/several_devices_support.hpp"
#include "gpu_fixture.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

using ops::testing::AtOnce;

class SeveralGpus : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (Device::cuda_count() < 2)
      GTEST_SKIP() << "needs two CUDA GPUs; this machine has " << Device::cuda_count();
  }
};

TEST_F(SeveralGpus, ThreadsOnTwoGpusRunOpsAtOnce) {
  const std::vector<Device> devices = {Device::cuda(0), Device::cuda(1)};
  AtOnce plan;
  plan.threads_per_device = 4;
  plan.rounds = 3;
  plan.shape.m = 300, plan.shape.n = 264, plan.shape.k = 1024, plan.shape.tile = std::nullopt;
  EXPECT_EQ(ops::testing::run_on_devices_at_once(devices, plan), std::vector<std::string>{});
}

TEST_F(SeveralGpus, AnOpBuiltForOneGpuRefusesTheOthersTensors) {
  const Device built = Device::cuda(0), other = Device::cuda(1);
  EXPECT_NE(built.describe(), other.describe());
  const std::string why = ops::testing::refusal_across_devices(built, other);
  EXPECT_NE(why.find("A is on " + other.describe() + ": GemmAmax was built for " + built.describe()),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
