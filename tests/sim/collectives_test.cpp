// shfl.sync, vote.sync, redux.sync, elect.sync, activemask and bar.warp.sync
// against hand-computed expectations.
#include "sim_harness.hpp"

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

class Collectives : public SimTest {
 protected:
  std::vector<std::uint32_t> run_lanes(const std::string& body, std::uint32_t threads = 32) {
    KernelSource k("collective");
    k.param(Type::u64, "out")
        .regs(Type::b32, "%r", 10)
        .regs(Type::b64, "%rd", 4)
        .regs(Type::pred, "%p", 4);
    k.code(R"(
      ld.param.u64 %rd1, [out];
      mov.u32 %r1, %laneid;
      mul.wide.u32 %rd2, %r1, 32;
      add.u64 %rd3, %rd1, %rd2;
      mov.u32 %r2, 0; mov.u32 %r3, 0; mov.u32 %r4, 0; mov.u32 %r5, 0;
      mov.u32 %r6, 0; mov.u32 %r7, 0; mov.u32 %r8, 0; mov.u32 %r9, 0;
    )" + body +
           R"(
      st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r5};
      st.global.v4.u32 [%rd3+16], {%r6, %r7, %r8, %r9};
    )");
    auto out = zeros<std::uint32_t>(8 * 32);
    run(k, {1, 1, 1}, {threads, 1, 1}, {arg_u64(out)});
    return download<std::uint32_t>(out, 8 * 32);
  }
};

TEST_F(Collectives, ShflModesAndClamps) {
  auto h = run_lanes(R"(
    mad.lo.u32 %r0, %r1, 10, 1;
    shfl.sync.up.b32 %r2|%p1, %r0, 1, 0, -1;
    selp.u32 %r3, 1, 0, %p1;
    shfl.sync.down.b32 %r4|%p2, %r0, 2, 31, -1;
    selp.u32 %r5, 1, 0, %p2;
    shfl.sync.bfly.b32 %r6, %r0, 5, 31, -1;
    shfl.sync.idx.b32 %r7, %r0, 2, 0x181f, -1;
    xor.b32 %r9, %r1, 3;
    shfl.sync.idx.b32 %r8, %r0, %r9, 31, -1;
    shfl.sync.down.b32 %r9, %r0, 1, 0x1807, -1;
  )");
  auto v = [](std::uint32_t lane) { return lane * 10 + 1; };
  for (std::uint32_t l = 0; l < 32; ++l) {
    const std::uint32_t* r = &h[8 * l];
    EXPECT_EQ(r[0], l >= 1 ? v(l - 1) : v(l)) << l;  // up: lanes below 1 keep their own value
    EXPECT_EQ(r[1], l >= 1 ? 1u : 0u) << l;
    EXPECT_EQ(r[2], l + 2 <= 31 ? v(l + 2) : v(l)) << l;
    EXPECT_EQ(r[3], l + 2 <= 31 ? 1u : 0u) << l;
    EXPECT_EQ(r[4], v(l ^ 5)) << l;
    EXPECT_EQ(r[5], v((l & 0x18) | 2)) << l;  // width-8 segments
    EXPECT_EQ(r[6], v(l ^ 3)) << l;
    // down by 1 inside 8-lane segments: the last lane of a segment keeps its own
    EXPECT_EQ(r[7], l % 8 == 7 ? v(l) : v(l + 1)) << l;
  }
}

TEST_F(Collectives, VoteAllAnyUniBallot) {
  auto h = run_lanes(R"(
    setp.lt.u32 %p1, %r1, 5;
    vote.sync.all.pred %p2, %p1, -1;
    selp.u32 %r2, 1, 0, %p2;
    vote.sync.any.pred %p2, %p1, -1;
    selp.u32 %r3, 1, 0, %p2;
    vote.sync.uni.pred %p2, %p1, -1;
    selp.u32 %r4, 1, 0, %p2;
    vote.sync.ballot.b32 %r5, %p1, -1;
    vote.sync.ballot.b32 %r6, !%p1, -1;
    setp.lt.u32 %p3, %r1, 100;
    vote.sync.all.pred %p2, %p3, -1;
    selp.u32 %r7, 1, 0, %p2;
    vote.sync.uni.pred %p2, %p3, -1;
    selp.u32 %r8, 1, 0, %p2;
  )");
  for (std::uint32_t l = 0; l < 32; ++l) {
    const std::uint32_t* r = &h[8 * l];
    EXPECT_EQ(r[0], 0u);
    EXPECT_EQ(r[1], 1u);
    EXPECT_EQ(r[2], 0u);
    EXPECT_EQ(r[3], 0x1Fu);
    EXPECT_EQ(r[4], 0xFFFFFFE0u);
    EXPECT_EQ(r[5], 1u);
    EXPECT_EQ(r[6], 1u);
  }
}

TEST_F(Collectives, ReduxAllOperations) {
  auto h = run_lanes(R"(
    redux.sync.add.u32 %r2, %r1, 0xffff;
    sub.s32 %r0, %r1, 16;
    redux.sync.min.s32 %r3, %r0, 0xffff;
    redux.sync.max.s32 %r4, %r0, 0xffff;
    redux.sync.min.u32 %r5, %r0, 0xffff;
    shl.b32 %r0, 1, %r1;
    redux.sync.or.b32 %r6, %r0, 0xffff;
    redux.sync.xor.b32 %r7, %r1, 0xffff;
    or.b32 %r0, %r1, 0x100;
    redux.sync.and.b32 %r8, %r0, 0xffff;
    redux.sync.max.u32 %r9, %r1, 0x0000FFFF;
  )",
                     16);
  for (std::uint32_t l = 0; l < 16; ++l) {
    const std::uint32_t* r = &h[8 * l];
    EXPECT_EQ(r[0], 120u);  // 0 + ... + 15
    EXPECT_EQ(static_cast<std::int32_t>(r[1]), -16);
    EXPECT_EQ(static_cast<std::int32_t>(r[2]), -1);
    EXPECT_EQ(r[3], 0xFFFFFFF0u);  // unsigned min of -16..-1
    EXPECT_EQ(r[4], 0xFFFFu);
    EXPECT_EQ(r[5], 0u);  // 0^1^...^15
    EXPECT_EQ(r[6], 0x100u);
    EXPECT_EQ(r[7], 15u);
  }
}

TEST_F(Collectives, PartialMasksInDivergentBranches) {
  // Each half of the warp shuffles among itself at its own instruction.
  auto h = run_lanes(R"(
    setp.lt.u32 %p1, %r1, 16;
    @!%p1 bra HIGH;
    shfl.sync.bfly.b32 %r2, %r1, 1, 31, 0x0000ffff;
    redux.sync.add.u32 %r3, %r1, 0x0000ffff;
    bra.uni JOIN;
  HIGH:
    shfl.sync.idx.b32 %r2, %r1, 31, 31, 0xffff0000;
    redux.sync.add.u32 %r3, %r1, 0xffff0000;
  JOIN:
    bar.warp.sync -1;
    activemask.b32 %r4;
    elect.sync %r5|%p2, -1;
    selp.u32 %r6, 1, 0, %p2;
  )");
  for (std::uint32_t l = 0; l < 32; ++l) {
    const std::uint32_t* r = &h[8 * l];
    EXPECT_EQ(r[0], l < 16 ? l ^ 1 : 31u) << l;
    EXPECT_EQ(r[1], l < 16 ? 120u : 376u) << l;
    EXPECT_EQ(r[2], 0xFFFFFFFFu);
    EXPECT_EQ(r[3], 0u);
    EXPECT_EQ(r[4], l == 0 ? 1u : 0u);
  }
}

TEST_F(Collectives, CollectiveWaitsForMembersThatArriveLater) {
  // Lanes 0-7 reach the shfl only after a longer path; the others wait there.
  auto h = run_lanes(R"(
    mov.u32 %r0, 0;
    setp.ge.u32 %p1, %r1, 8;
    @%p1 bra MEET;
  SLOW:
    add.u32 %r0, %r0, 1;
    setp.lt.u32 %p2, %r0, 50;
    @%p2 bra SLOW;
  MEET:
    add.u32 %r0, %r0, %r1;
    shfl.sync.idx.b32 %r2, %r0, 3, 31, -1;
    shfl.sync.idx.b32 %r3, %r0, 30, 31, -1;
  )");
  for (std::uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(h[8 * l], 53u) << l;
    EXPECT_EQ(h[8 * l + 1], 30u) << l;
  }
}

TEST_F(Collectives, MemberMaskNamingMissingLanesIsReportedNotHung) {
  KernelSource k("half_warp_shfl");
  k.regs(Type::b32, "%r", 2);
  k.code("mov.u32 %r1, %laneid;\nshfl.sync.idx.b32 %r0, %r1, 0, 31, -1;");
  const std::string msg = error_of(k, {1, 1, 1}, {16, 1, 1}, {});
  EXPECT_NE(msg.find("deadlock in kernel 'half_warp_shfl'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("PTX line " + std::to_string(line_of(k.module(), "shfl.sync"))),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("lanes 16-31 are not threads of the CTA"), std::string::npos) << msg;
}

TEST_F(Collectives, ShflFromALaneOutsideTheMaskIsRefusedWithItsLine) {
  KernelSource k("shfl_outside");
  k.regs(Type::b32, "%r", 2).regs(Type::pred, "%p", 1);
  k.code(
      "mov.u32 %r1, %laneid;\nsetp.lt.u32 %p0, %r1, 16;\n@%p0 shfl.sync.idx.b32 %r0, %r1, 20, 31, "
      "0xffff;");
  const std::string msg = error_of(k, {1, 1, 1}, {32, 1, 1}, {});
  EXPECT_NE(msg.find("kernel 'shfl_outside', PTX line " +
                     std::to_string(line_of(k.module(), "shfl.sync"))),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("reads lane 20, which is not taking part"), std::string::npos) << msg;
}

TEST_F(Collectives, BarrierIdOutOfRangeIsRefusedWithItsLine) {
  KernelSource k("bad_barrier");
  k.code("bar.sync 16;");
  const std::string msg = error_of(k, {1, 1, 1}, {32, 1, 1}, {});
  EXPECT_NE(msg.find("PTX line " + std::to_string(line_of(k.module(), "bar.sync")) +
                     " (bar.sync 16): block (0,0,0)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("barrier 16 does not exist"), std::string::npos) << msg;
}

}  // namespace
}  // namespace warpforge::sim::testing
