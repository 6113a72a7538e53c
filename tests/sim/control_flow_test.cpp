// Divergence and reconvergence under the per-thread-PC scheduler.
#include "sim_harness.hpp"

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

// Stores %r3 and the active mask at the join point to out[2·tid], out[2·tid+1].
const char* kStoreResult = R"(
  activemask.b32 %r9;
  mul.wide.u32 %rd2, %r1, 8;
  add.u64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r3, %r9};
  ret;
)";

KernelSource kernel_with(const std::string& name, const std::string& body) {
  KernelSource k(name);
  k.param(Type::u64, "out")
      .regs(Type::b32, "%r", 10)
      .regs(Type::b64, "%rd", 4)
      .regs(Type::pred, "%p", 4);
  k.code("ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\n" + body + kStoreResult);
  return k;
}

TEST_F(SimTest, IfElseInsideAWarpReconvergesAtTheJoin) {
  auto k = kernel_with("if_else", R"(
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra EVEN;
    mul.lo.u32 %r3, %r1, 3;
    bra.uni JOIN;
  EVEN:
    add.u32 %r3, %r1, 100;
  JOIN:
  )");
  auto out = zeros<std::uint32_t>(64);
  run(k, {1, 1, 1}, {32, 1, 1}, {arg_u64(out)});
  auto h = download<std::uint32_t>(out, 64);
  for (std::uint32_t t = 0; t < 32; ++t) {
    EXPECT_EQ(h[2 * t], t % 2 ? 3 * t : t + 100) << t;
    EXPECT_EQ(h[2 * t + 1], 0xFFFFFFFFu) << "thread " << t << " did not reconverge";
  }
}

TEST_F(SimTest, NestedDivergenceReconverges) {
  auto k = kernel_with("nested", R"(
    setp.lt.u32 %p1, %r1, 16;
    @!%p1 bra HIGH;
    and.b32 %r2, %r1, 1;
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra ODD;
    mov.u32 %r3, 1;
    bra.uni INNER_JOIN;
  ODD:
    mov.u32 %r3, 2;
  INNER_JOIN:
    activemask.b32 %r4;
    add.u32 %r3, %r3, %r4;
    bra.uni JOIN;
  HIGH:
    mov.u32 %r3, 7;
  JOIN:
  )");
  auto out = zeros<std::uint32_t>(64);
  run(k, {1, 1, 1}, {32, 1, 1}, {arg_u64(out)});
  auto h = download<std::uint32_t>(out, 64);
  for (std::uint32_t t = 0; t < 32; ++t) {
    // The inner join sees the 16 low lanes together.
    const std::uint32_t expected = t >= 16 ? 7 : (t % 2 ? 2 : 1) + 0xFFFFu;
    EXPECT_EQ(h[2 * t], expected) << t;
    EXPECT_EQ(h[2 * t + 1], 0xFFFFFFFFu) << t;
  }
}

TEST_F(SimTest, LoopsWithPerThreadTripCounts) {
  // sum of 0..tid-1, each thread iterating tid times
  auto k = kernel_with("loop", R"(
    mov.u32 %r3, 0;
    mov.u32 %r2, 0;
  LOOP:
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    add.u32 %r3, %r3, %r2;
    add.u32 %r2, %r2, 1;
    bra.uni LOOP;
  DONE:
  )");
  auto out = zeros<std::uint32_t>(128);
  run(k, {1, 1, 1}, {64, 1, 1}, {arg_u64(out)});
  auto h = download<std::uint32_t>(out, 128);
  for (std::uint32_t t = 0; t < 64; ++t) {
    EXPECT_EQ(h[2 * t], t == 0 ? 0 : t * (t - 1) / 2) << t;
    EXPECT_EQ(h[2 * t + 1], 0xFFFFFFFFu) << t;
  }
}

TEST_F(SimTest, EarlyExitLeavesTheOthersRunning) {
  KernelSource k("early_exit");
  k.param(Type::u64, "out")
      .regs(Type::b32, "%r", 4)
      .regs(Type::b64, "%rd", 4)
      .regs(Type::pred, "%p", 2);
  k.code(R"(
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    setp.ge.u32 %p1, %r1, 10;
    @%p1 exit;
    activemask.b32 %r2;
    st.global.u32 [%rd3], %r2;
  )");
  auto out = upload(std::vector<std::uint32_t>(32, 5));
  run(k, {1, 1, 1}, {32, 1, 1}, {arg_u64(out)});
  auto h = download<std::uint32_t>(out, 32);
  for (std::uint32_t t = 0; t < 32; ++t) EXPECT_EQ(h[t], t < 10 ? 0x3FFu : 5u) << t;
}

TEST_F(SimTest, GridAndBlockCoordinates) {
  KernelSource k("coords");
  k.param(Type::u64, "out").regs(Type::b32, "%r", 10).regs(Type::b64, "%rd", 4);
  k.code(R"(
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ctaid.y;
    mov.u32 %r5, %ntid.x;
    mov.u32 %r6, %nctaid.x;
    mad.lo.u32 %r7, %r2, %r5, %r1;
    mad.lo.u32 %r8, %r4, %r6, %r3;
    mad.lo.u32 %r7, %r8, 32, %r7;
    mul.wide.u32 %rd2, %r7, 4;
    add.u64 %rd3, %rd1, %rd2;
    mov.u32 %r9, %laneid;
    shl.b32 %r9, %r9, 16;
    mov.u32 %r0, %warpid;
    shl.b32 %r0, %r0, 8;
    or.b32 %r9, %r9, %r0;
    or.b32 %r9, %r9, %r8;
    st.global.u32 [%rd3], %r9;
  )");
  auto out = zeros<std::uint32_t>(6 * 32);
  run(k, {3, 2, 1}, {8, 4, 1}, {arg_u64(out)});
  auto h = download<std::uint32_t>(out, 6 * 32);
  for (std::uint32_t cta = 0; cta < 6; ++cta)
    for (std::uint32_t t = 0; t < 32; ++t)
      EXPECT_EQ(h[cta * 32 + t], (t << 16) | cta) << cta << " " << t;
}

}  // namespace
}  // namespace warpforge::sim::testing
