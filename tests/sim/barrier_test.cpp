// CTA barriers: full and partial participation, bar.arrive producers, and
// reported deadlocks.
#include "sim_harness.hpp"

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

TEST_F(SimTest, BarSyncOrdersSharedMemoryAcrossWarps) {
  // Each thread writes smem[tid], then reads its mirror smem[n-1-tid].
  KernelSource k("reverse");
  k.param(Type::u64, "out")
      .regs(Type::b32, "%r", 8)
      .regs(Type::b64, "%rd", 4)
      .shared(Type::b32, "buf", 256);
  k.code(R"(
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, buf;
    mad.lo.u32 %r4, %r1, 4, %r3;
    mul.lo.u32 %r5, %r1, 7;
    st.shared.u32 [%r4], %r5;
    bar.sync 0;
    sub.u32 %r6, %r2, 1;
    sub.u32 %r6, %r6, %r1;
    mad.lo.u32 %r6, %r6, 4, %r3;
    ld.shared.u32 %r7, [%r6];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r7;
  )");
  auto out = zeros<std::uint32_t>(256);
  run(k, {2, 1, 1}, {256, 1, 1}, {arg_u64(out)});
  auto h = download<std::uint32_t>(out, 256);
  for (std::uint32_t t = 0; t < 256; ++t) EXPECT_EQ(h[t], (255 - t) * 7) << t;
}

TEST_F(SimTest, NamedBarrierWithThreadCountSyncsASubsetOfWarps) {
  // Warps 0 and 1 exchange through barrier 1 with a count of 64 while warps
  // 2 and 3 never touch it; everyone meets at barrier 0 at the end.
  KernelSource k("partial");
  k.param(Type::u64, "out")
      .regs(Type::b32, "%r", 8)
      .regs(Type::b64, "%rd", 4)
      .regs(Type::pred, "%p", 2)
      .shared(Type::b32, "buf", 64);
  k.code(R"(
    mov.u32 %r1, %tid.x;
    mov.u32 %r7, 0;
    setp.ge.u32 %p1, %r1, 64;
    @%p1 bra OTHERS;
    mov.u32 %r3, buf;
    mad.lo.u32 %r4, %r1, 4, %r3;
    add.u32 %r5, %r1, 1000;
    st.shared.u32 [%r4], %r5;
    bar.sync 1, 64;
    xor.b32 %r6, %r1, 32;
    mad.lo.u32 %r6, %r6, 4, %r3;
    ld.shared.u32 %r7, [%r6];
  OTHERS:
    bar.sync 0;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r7;
  )");
  auto out = zeros<std::uint32_t>(128);
  run(k, {1, 1, 1}, {128, 1, 1}, {arg_u64(out)});
  auto h = download<std::uint32_t>(out, 128);
  for (std::uint32_t t = 0; t < 128; ++t) EXPECT_EQ(h[t], t < 64 ? (t ^ 32) + 1000 : 0u) << t;
}

TEST_F(SimTest, BarArriveLetsProducersGoOnWhileConsumersWait) {
  // Warp 1 produces and arrives (does not wait); warp 0 syncs on barrier 2
  // with a count of 64 and then reads what warp 1 wrote.
  KernelSource k("producer_consumer");
  k.param(Type::u64, "out")
      .regs(Type::b32, "%r", 8)
      .regs(Type::b64, "%rd", 4)
      .regs(Type::pred, "%p", 2)
      .shared(Type::b32, "buf", 32);
  k.code(R"(
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 31;
    mov.u32 %r3, buf;
    mad.lo.u32 %r4, %r2, 4, %r3;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra CONSUMER;
    mul.lo.u32 %r5, %r2, %r2;
    st.shared.u32 [%r4], %r5;
    bar.arrive 2, 64;
    exit;
  CONSUMER:
    bar.sync 2, 64;
    ld.shared.u32 %r5, [%r4];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r2, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r5;
  )");
  auto out = zeros<std::uint32_t>(32);
  run(k, {1, 1, 1}, {64, 1, 1}, {arg_u64(out)});
  auto h = download<std::uint32_t>(out, 32);
  for (std::uint32_t t = 0; t < 32; ++t) EXPECT_EQ(h[t], t * t) << t;
}

TEST_F(SimTest, BarrierThatExitedThreadsCanNeverReachIsAReportedDeadlock) {
  KernelSource k("planted_deadlock");
  k.regs(Type::b32, "%r", 2).regs(Type::pred, "%p", 2);
  k.code(R"(
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 40;
    @%p1 exit;
    bar.sync 0;
  )");
  const std::string msg = error_of(k, {2, 1, 1}, {64, 1, 1}, {});
  EXPECT_NE(msg.find("deadlock in kernel 'planted_deadlock'"), std::string::npos) << msg;
  EXPECT_NE(
      msg.find("barrier 0 (PTX line " + std::to_string(line_of(k.module(), "bar.sync 0")) + ")"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("expects 64 threads, 40 arrived"), std::string::npos) << msg;
  EXPECT_NE(msg.find("waiting: (0,0,0) (1,0,0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("exited: (40,0,0)"), std::string::npos) << msg;
}

TEST_F(SimTest, BarriersAtDifferentIdsWaitingOnEachOtherDeadlock) {
  KernelSource k("crossed_barriers");
  k.regs(Type::b32, "%r", 2).regs(Type::pred, "%p", 2);
  k.code(R"(
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra FIRST;
    bar.sync 2, 64;
    bar.sync 1, 64;
    exit;
  FIRST:
    bar.sync 1, 64;
    bar.sync 2, 64;
  )");
  const std::string msg = error_of(k, {1, 1, 1}, {64, 1, 1}, {});
  EXPECT_NE(msg.find("barrier 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("barrier 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expects 64 threads, 32 arrived"), std::string::npos) << msg;
}

TEST_F(SimTest, AWarpSpinningOnAFlagLetsTheSettingWarpRun) {
  // Warp 0 polls a shared flag that warp 1 sets after a while; the scheduler
  // rotates warps, so the spin ends.
  KernelSource k("spin_wait");
  k.param(Type::u64, "out")
      .regs(Type::b32, "%r", 6)
      .regs(Type::b64, "%rd", 2)
      .regs(Type::pred, "%p", 3)
      .shared(Type::b32, "flag", 1);
  k.code(R"(
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra SPIN;
    st.volatile.shared.u32 [flag], 42;
    exit;
  SPIN:
    mov.u32 %r3, 0;
  POLL:
    add.u32 %r3, %r3, 1;
    ld.volatile.shared.u32 %r2, [flag];
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra POLL;
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r2;
  )");
  auto out = zeros<std::uint32_t>(1);
  run(k, {1, 1, 1}, {64, 1, 1}, {arg_u64(out)});
  EXPECT_EQ(download<std::uint32_t>(out, 1)[0], 42u);
}

}  // namespace
}  // namespace warpforge::sim::testing

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

TEST_F(SimTest, MbarrierPhaseCompletesWhenProducersArrive) {
  // Warps 1-2 produce and arrive; warp 0 spins on try_wait.parity for phase 0.
  KernelSource k("mbarrier_producers");
  k.param(Type::u64, "out")
      .regs(Type::b32, "%r", 8)
      .regs(Type::b64, "%rd", 4)
      .regs(Type::pred, "%p", 3);
  k.shared(Type::b64, "bar", 1, 8).shared(Type::b32, "data", 64);
  k.code(R"(
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @!%p1 mbarrier.init.shared::cta.b64 [bar], 64;
    bar.sync 0;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra CONSUMER;
    sub.u32 %r2, %r1, 32;
    mov.u32 %r3, data;
    mad.lo.u32 %r3, %r2, 4, %r3;
    shl.b32 %r4, %r1, 1;
    st.shared.u32 [%r3], %r4;
    mbarrier.arrive.release.cta.shared::cta.b64 %rd0, [bar];
    exit;
  CONSUMER:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra CONSUMER;
    mov.u32 %r3, data;
    mad.lo.u32 %r3, %r1, 4, %r3;
    ld.shared.u32 %r4, [%r3];
    ld.shared.u32 %r5, [%r3+128];
    mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 1;
    selp.u32 %r6, 1, 0, %p2;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 12;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r4;
    st.global.u32 [%rd1+4], %r5;
    st.global.u32 [%rd1+8], %r6;
  )");
  auto out = zeros<std::uint32_t>(96);
  run(k, {1, 1, 1}, {96, 1, 1}, {arg_u64(out)});
  auto h = download<std::uint32_t>(out, 96);
  for (std::uint32_t t = 0; t < 32; ++t) {
    EXPECT_EQ(h[3 * t], 2 * (t + 32)) << t;
    EXPECT_EQ(h[3 * t + 1], 2 * (t + 64)) << t;
    EXPECT_EQ(h[3 * t + 2], 0u) << "phase 1 has not completed";
  }
}

TEST_F(SimTest, MbarrierTransactionBytesAndCpAsyncArrive) {
  KernelSource k("mbarrier_tx");
  k.param(Type::u64, "in")
      .param(Type::u64, "out")
      .regs(Type::b32, "%r", 8)
      .regs(Type::b64, "%rd", 4)
      .regs(Type::pred, "%p", 2);
  k.shared(Type::b64, "bar", 2, 8).shared(Type::b32, "tile", 4);
  k.code(R"(
    mbarrier.init.shared.b64 [bar], 1;
    mbarrier.arrive.expect_tx.shared.b64 %rd0, [bar], 16;
    mbarrier.test_wait.shared.b64 %p1, [bar], %rd0;
    selp.u32 %r1, 1, 0, %p1;
    mbarrier.complete_tx.shared.b64 [bar], 16;
    mbarrier.test_wait.shared.b64 %p1, [bar], %rd0;
    selp.u32 %r2, 1, 0, %p1;
    mbarrier.init.shared.b64 [bar+8], 1;
    ld.param.u64 %rd1, [in];
    cp.async.cg.shared.global [tile], [%rd1], 16;
    cp.async.mbarrier.arrive.noinc.shared.b64 [bar+8];
    mbarrier.test_wait.parity.shared.b64 %p1, [bar+8], 0;
    selp.u32 %r3, 1, 0, %p1;
    ld.shared.u32 %r4, [tile+12];
    ld.param.u64 %rd2, [out];
    st.global.v4.u32 [%rd2], {%r1, %r2, %r3, %r4};
  )");
  auto in = upload(std::vector<std::uint32_t>{1, 2, 3, 4});
  auto out = zeros<std::uint32_t>(4);
  run(k, {1, 1, 1}, {1, 1, 1}, {arg_u64(in), arg_u64(out)});
  EXPECT_EQ(download<std::uint32_t>(out, 4), (std::vector<std::uint32_t>{0, 1, 1, 4}));
}

}  // namespace
}  // namespace warpforge::sim::testing
