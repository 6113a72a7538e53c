// Clusters on the simulator: the CTAs of a cluster run together, reach each
// other's shared memory through mapa and .shared::cluster accesses, meet at
// barrier.cluster, and arrive on each other's mbarriers; mbarrier.try_wait
// lets the other warps and CTAs run while it waits, and a wait that can never
// finish is a reported deadlock.
#include "hopper_harness.hpp"

namespace warpforge::sim::testing {
namespace {

// Each CTA of a (2,2) cluster writes 1000*rank + tid to its shared memory;
// after a cluster barrier each thread reads the same slot of CTA rank ^ 1
// and of rank ^ 2 (through a generic mapa address), and writes
// (its rank, cluster_ctaid.x, cluster_ctaid.y, clusterid.x, clusterid.y,
// neighbour values) to out.
const char* kExchangeKernel = R"(
.visible .entry exchange(.param .u64 out)
{
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  .shared .align 16 .b32 slots[64];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, slots;
  shl.b32 %r4, %r1, 2;
  add.u32 %r5, %r3, %r4;
  mad.lo.u32 %r6, %r2, 1000, %r1;
  st.shared.u32 [%r5], %r6;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  xor.b32 %r7, %r2, 1;
  mapa.shared::cluster.u32 %r8, %r5, %r7;
  ld.shared::cluster.u32 %r9, [%r8];
  xor.b32 %r10, %r2, 2;
  cvt.u64.u32 %rd6, %r5;
  cvta.shared.u64 %rd1, %rd6;
  mapa.u64 %rd2, %rd1, %r10;
  ld.u32 %r11, [%rd2];
  mov.u32 %r12, %cluster_ctaid.x;
  mov.u32 %r13, %cluster_ctaid.y;
  mov.u32 %r14, %clusterid.x;
  mov.u32 %r15, %clusterid.y;
  mov.u32 %r16, %ctaid.x;
  mov.u32 %r17, %ctaid.y;
  mov.u32 %r18, %nctaid.x;
  mad.lo.u32 %r19, %r17, %r18, %r16;
  mad.lo.u32 %r19, %r19, 64, %r1;
  mul.wide.u32 %rd3, %r19, 32;
  ld.param.u64 %rd4, [out];
  cvta.to.global.u64 %rd4, %rd4;
  add.u64 %rd5, %rd4, %rd3;
  st.global.v4.u32 [%rd5], {%r2, %r12, %r13, %r14};
  st.global.v4.u32 [%rd5+16], {%r15, %r9, %r11, %r6};
  barrier.cluster.arrive.release;
  barrier.cluster.wait.acquire;
  ret;
}
)";

TEST_F(HopperTest, ClusterCtasExchangeThroughDistributedSharedMemory) {
  const std::uint32_t gx = 4, gy = 2, threads = 64;
  auto out = upload(std::vector<std::uint32_t>(gx * gy * threads * 8, 0xFFFFFFFFu));
  run_ptx(ptx_module(kExchangeKernel), "exchange", {.grid = {gx, gy}, .block = {threads}, .cluster = {2, 2, 1}},
          {arg_u64(out)});
  const auto got = download<std::uint32_t>(out, gx * gy * threads * 8);
  for (std::uint32_t y = 0; y < gy; ++y)
    for (std::uint32_t x = 0; x < gx; ++x)
      for (std::uint32_t t = 0; t < threads; ++t) {
        const std::uint32_t* r = &got[((y * gx + x) * threads + t) * 8];
        const std::uint32_t cx = x % 2, cy = y % 2, rank = cx + 2 * cy;
        ASSERT_EQ(r[0], rank) << x << "," << y << " thread " << t;
        EXPECT_EQ(r[1], cx);
        EXPECT_EQ(r[2], cy);
        EXPECT_EQ(r[3], x / 2);
        EXPECT_EQ(r[4], y / 2);
        EXPECT_EQ(r[5], 1000 * (rank ^ 1) + t);
        EXPECT_EQ(r[6], 1000 * (rank ^ 2) + t);
        EXPECT_EQ(r[7], 1000 * rank + t);
      }
}

// CTA rank 1 writes a value into rank 0's shared memory and arrives on rank
// 0's mbarrier, both remotely; rank 0 waits on it with try_wait (while its
// other warp spins on nothing) and reports what it finds.
const char* kRemoteArriveKernel = R"(
.visible .entry remote(.param .u64 out)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 8 .b64 bar;
  .shared .align 4 .b32 value;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, bar;
  mov.u32 %r4, value;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra INITED;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  fence.mbarrier_init.release.cluster;
INITED:
  barrier.cluster.arrive.relaxed.aligned;
  barrier.cluster.wait.aligned;
  setp.ne.or.u32 %p2, %r2, 1, %p1;
  @%p2 bra WAIT;
  mov.u32 %r5, 0;
  mapa.shared::cluster.u32 %r6, %r4, %r5;
  mapa.shared::cluster.u32 %r7, %r3, %r5;
  mov.u32 %r8, 4242;
  st.shared::cluster.u32 [%r6], %r8;
  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r7];
  bra DONE;
WAIT:
  setp.ne.u32 %p3, %r2, 0;
  @%p3 bra DONE;
LOOP:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
  @!%p2 bra LOOP;
  ld.shared.u32 %r9, [%r4];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
DONE:
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
}
)";

TEST_F(HopperTest, RemoteArriveCompletesAnotherCtasMbarrier) {
  auto out = upload(std::vector<std::uint32_t>(64, 0));
  run_ptx(ptx_module(kRemoteArriveKernel), "remote", {.grid = {2}, .block = {64}, .cluster = {2, 1, 1}},
          {arg_u64(out)});
  EXPECT_EQ(download<std::uint32_t>(out, 64), std::vector<std::uint32_t>(64, 4242));
}

TEST_F(HopperTest, TryWaitOnAPhaseThatNeverCompletesIsAReportedDeadlock) {
  const std::string text = ptx_module(R"(
.visible .entry stuck()
{
  .reg .b32 %r<4>;
  .reg .pred %p<2>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, bar;
  mbarrier.init.shared::cta.b64 [%r1], 64;
LOOP:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;
  @!%p1 bra LOOP;
  ret;
}
)");
  const std::string msg = ptx_error(text, "stuck", {.grid = {1}, .block = {32}}, {});
  EXPECT_NE(msg.find("deadlock in kernel 'stuck', block (0,0,0): warp 0 waits in mbarrier.try_wait at PTX line"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("for a phase that never completes; waiting: (0,0,0) (1,0,0)"), std::string::npos) << msg;
}

TEST_F(HopperTest, AClusterBarrierMissingACtaIsAReportedDeadlock) {
  const std::string text = ptx_module(R"(
.visible .entry half()
{
  .reg .b32 %r<4>;
  .reg .pred %p<2>;
  mov.u32 %r1, %cluster_ctarank;
  setp.eq.u32 %p1, %r1, 1;
  @%p1 bra OUT;
  barrier.cluster.arrive;
  barrier.cluster.wait;
OUT:
  bar.sync 0;
  bar.sync 0;
  ret;
}
)");
  // Rank 1 never arrives; once it has exited, the barrier waits only for
  // the non-exited threads, rank 0's.
  EXPECT_NO_THROW(run_ptx(text, "half", {.grid = {2}, .block = {32}, .cluster = {2, 1, 1}}, {}));
  const std::string stuck = ptx_module(R"(
.visible .entry stuck()
{
  .reg .b32 %r<4>;
  .reg .pred %p<2>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %cluster_ctarank;
  mov.u32 %r2, bar;
  setp.eq.u32 %p1, %r1, 1;
  @%p1 bra OUT;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
OUT:
  mbarrier.init.shared::cta.b64 [%r2], 1;
LOOP:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0;
  @!%p1 bra LOOP;
  ret;
}
)");
  const std::string msg = ptx_error(stuck, "stuck", {.grid = {2}, .block = {32}, .cluster = {2, 1, 1}}, {});
  EXPECT_NE(msg.find("deadlock in kernel 'stuck', cluster of 2 CTAs: [block (0,0,0), rank 0: warp 0 waits in "
                     "barrier.cluster.wait at PTX line"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("32 of the cluster's 64 live threads arrived"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[block (1,0,0), rank 1: warp 0 waits in mbarrier.try_wait"), std::string::npos) << msg;
}

TEST_F(HopperTest, DistributedSharedMemoryAccessesAreCheckedAgainstTheCluster) {
  const std::string text = ptx_module(R"(
.visible .entry far(.param .u32 rank)
{
  .reg .b32 %r<8>;
  .shared .align 4 .b32 slot;
  mov.u32 %r1, slot;
  ld.param.u32 %r2, [rank];
  mapa.shared::cluster.u32 %r3, %r1, %r2;
  ld.shared::cluster.u32 %r4, [%r3];
  ret;
}
)");
  const std::string mapa = ptx_error(text, "far", {.grid = {2}, .block = {32}, .cluster = {2, 1, 1}}, {arg_u32(2)});
  EXPECT_NE(mapa.find("thread (0,0,0): mapa to CTA rank 2; the cluster has 2 CTAs (ranks 0..1)"), std::string::npos)
      << mapa;
  const std::string raw = ptx_module(R"(
.visible .entry raw()
{
  .reg .b32 %r<8>;
  mov.u32 %r1, 0x5000000;
  ld.shared::cluster.u32 %r4, [%r1];
  ret;
}
)");
  const std::string load = ptx_error(raw, "raw", {.grid = {2}, .block = {32}, .cluster = {2, 1, 1}}, {});
  EXPECT_NE(load.find("load of 4 bytes at shared address 0x5000000 names CTA rank 4 of the cluster, which has 2 CTAs"),
            std::string::npos)
      << load;
}

TEST_F(HopperTest, AClusterThatDoesNotDivideTheGridIsRefused) {
  const std::string msg = ptx_error(ptx_module(".visible .entry k()\n{\n  ret;\n}\n"), "k",
                                    {.grid = {3}, .block = {32}, .cluster = {2, 1, 1}}, {});
  EXPECT_NE(msg.find("kernel 'k': cluster (2,1,1) does not divide the grid"), std::string::npos) << msg;
}

TEST_F(HopperTest, ClusterBarrierWaitNeedsAnArrivalFirst) {
  const std::string text = ptx_module(R"(
.visible .entry k()
{
  barrier.cluster.wait;
  ret;
}
)");
  const std::string msg = ptx_error(text, "k", {.grid = {1}, .block = {32}}, {});
  EXPECT_NE(msg.find("thread (0,0,0): barrier.cluster.wait without a barrier.cluster.arrive before it"),
            std::string::npos)
      << msg;
  const std::string twice = ptx_module(R"(
.visible .entry k()
{
  barrier.cluster.arrive;
  barrier.cluster.arrive;
  ret;
}
)");
  const std::string msg2 = ptx_error(twice, "k", {.grid = {1}, .block = {64}}, {});
  EXPECT_NE(msg2.find("barrier.cluster.arrive again before a barrier.cluster.wait for the previous arrival"),
            std::string::npos)
      << msg2;
}

// A shared variable's address in a cluster launch carries the CTA's own
// shared::cluster tag, (rank + 1) << 24, as the GPU's carry high bits there
// (which an unmasked wgmma descriptor start address once tripped over);
// accesses through it reach the CTA's own shared memory. Without clusters
// the address is the plain offset.
TEST_F(HopperTest, SharedAddressesCarryTheClusterRankInClusterLaunches) {
  const std::string text = ptx_module(R"(
.visible .entry tagged(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 16 .b32 slots[32];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, slots;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  add.u32 %r5, %r1, 7;
  st.shared.u32 [%r4], %r5;
  bar.sync 0;
  ld.shared.u32 %r6, [slots+4];
  mov.u32 %r7, %ctaid.x;
  mad.lo.u32 %r7, %r7, 32, %r1;
  mul.wide.u32 %rd1, %r7, 8;
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd2, %rd2;
  add.u64 %rd3, %rd2, %rd1;
  st.global.v2.u32 [%rd3], {%r2, %r6};
  ret;
}
)");
  for (std::uint32_t cluster : {1u, 2u}) {
    auto out = upload(std::vector<std::uint32_t>(2 * 32 * 2, 0xFFFFFFFFu));
    run_ptx(text, "tagged", {.grid = {2}, .block = {32}, .cluster = {cluster, 1, 1}}, {arg_u64(out)});
    const auto got = download<std::uint32_t>(out, 2 * 32 * 2);
    for (std::uint32_t cta = 0; cta < 2; ++cta) {
      const std::uint32_t tag = cluster == 1 ? 0u : (cta + 1) << 24;
      EXPECT_EQ(got[cta * 64] & 0xFF000000u, tag) << "cluster " << cluster << " CTA " << cta;
      EXPECT_EQ(got[cta * 64 + 1], 8u) << "thread 1's value, read back through the tagged address";
    }
  }
}

// The simulator runs every CTA of a launch whatever its size, so a
// persistent grid is sized as one cluster per cluster-sized group of SMs.
TEST_F(HopperTest, AnswersOneClusterPerClusterSizedGroupOfSms) {
  auto loaded = sim.load(ptx::parse(ptx_module(kExchangeKernel)));
  const int sms = sim.properties().sm_count;
  EXPECT_EQ(sim.max_active_clusters(*loaded, "exchange", {.grid = {4}, .block = {64}, .cluster = {4, 1, 1}}),
            std::max(1, sms / 4));
  EXPECT_EQ(sim.max_active_clusters(*loaded, "exchange", {.grid = {1}, .block = {64}}), std::max(1, sms));
}

}  // namespace
}  // namespace warpforge::sim::testing
