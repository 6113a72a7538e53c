// The Hopper scaffold on the hardware: the producer/consumer rings and the
// tile scheduler's order kernels of tests/tile run on the GPU and must
// deliver what they do on the simulator (every value through the ring; the
// host's order, clusters and stream-K included). Needs an sm_90 GPU.
#include "gpu_fixture.hpp"
#include "tile/scaffold_kernels.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

namespace scaffold = tile::testing;

class TileScaffoldGpu : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (!IsSkipped() && Device::cuda(0).target() != ptx::Target::sm_90a)
      GTEST_SKIP()
          << "the scaffold's kernels are sm_90a (mbarrier try_wait, clusters); this GPU is "
          << ptx::name(Device::cuda(0).target());
  }
};

TEST_F(TileScaffoldGpu, RingsDeliverEveryValue) {
  for (const scaffold::Ring& ring :
       {scaffold::Ring{1, 11, 2, false}, scaffold::Ring{3, 11, 2, false},
        scaffold::Ring{2, 13, 2, true}, scaffold::Ring{4, 13, 3, true}})
    EXPECT_EQ(scaffold::ring_mismatch(ring, scaffold::run_ring(Device::cuda(0), ring)), "");
}

TEST_F(TileScaffoldGpu, SchedulerOrderIsTheHostOrder) {
  for (const scaffold::OrderLaunch& c : scaffold::order_launches())
    EXPECT_EQ(scaffold::order_mismatch(c, scaffold::run_order(Device::cuda(0), c)), "")
        << "tile " << c.o.tile_m << "x" << c.o.tile_n << " cluster " << c.o.cluster_m << "x"
        << c.o.cluster_n << " splits " << c.o.splits << (c.o.stream_k ? " stream-K" : "")
        << " problem " << c.m << "x" << c.n << "x" << c.k << " L" << c.l << " on " << c.ctas
        << " CTAs";
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
