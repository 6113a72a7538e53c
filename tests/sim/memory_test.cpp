// State spaces, generic addressing, bounds and alignment checks, atomics and
// cp.async.
#include "sim_harness.hpp"

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

// out[tid] = in[tid + shift] for tid < n; with shift = 1 the last thread reads
// one element past the end of `in`.
KernelSource shifted_copy() {
  KernelSource k("shifted_copy");
  k.param(Type::u64, "in").param(Type::u64, "out").param(Type::u32, "shift");
  k.regs(Type::b32, "%r", 4).regs(Type::b64, "%rd", 6);
  k.code(R"(
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r2, [shift];
    mov.u32 %r1, %tid.x;
    add.u32 %r3, %r1, %r2;
    mul.wide.u32 %rd3, %r3, 4;
    add.u64 %rd4, %rd1, %rd3;
    ld.global.u32 %r0, [%rd4];
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r0;
  )");
  return k;
}

TEST_F(SimTest, OutOfBoundsLoadNamesLineThreadAddressAndAllocation) {
  auto in = upload(std::vector<std::uint32_t>(64, 1));
  auto out = zeros<std::uint32_t>(64);
  auto k = shifted_copy();
  const std::string msg =
      error_of(k, {1, 1, 1}, {64, 1, 1}, {arg_u64(in), arg_u64(out), arg_u32(1)});
  const int line = line_of(k.module(), "ld.global.u32 %r0");
  EXPECT_NE(msg.find("kernel 'shifted_copy', PTX line " + std::to_string(line) +
                     " (ld.global.u32 %r0, [%rd4])"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("block (0,0,0) thread (63,0,0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("load of 4 bytes at global address " + hex(in + 256)), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("allocation [" + hex(in) + ", " + hex(in + 256) +
                     ") of 256 bytes, 0 bytes past its end"),
            std::string::npos)
      << msg;
}

TEST_F(SimTest, OutOfBoundsStoreIsCaughtToo) {
  auto in = upload(std::vector<std::uint32_t>(64, 1));
  auto out = zeros<std::uint32_t>(32);
  auto k = shifted_copy();
  const std::string msg =
      error_of(k, {1, 1, 1}, {64, 1, 1}, {arg_u64(in), arg_u64(out), arg_u32(0)});
  EXPECT_NE(msg.find("PTX line " + std::to_string(line_of(k.module(), "st.global.u32"))),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("thread (32,0,0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("store of 4 bytes at global address " + hex(out + 128)), std::string::npos)
      << msg;
}

TEST_F(SimTest, MisalignedAccessIsReported) {
  KernelSource k("misaligned");
  k.param(Type::u64, "p").regs(Type::b32, "%r", 2).regs(Type::b64, "%rd", 2);
  k.code("ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1+2];");
  auto p = zeros<std::uint32_t>(4);
  const std::string msg = error_of(k, {1, 1, 1}, {1, 1, 1}, {arg_u64(p)});
  EXPECT_NE(msg.find("misaligned: it must be a multiple of 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("thread (0,0,0)"), std::string::npos) << msg;
}

TEST_F(SimTest, SharedMemoryBoundsAreTheCtasAllocation) {
  KernelSource k("shared_oob");
  k.regs(Type::b32, "%r", 3).shared(Type::b32, "buf", 8);
  k.code("mov.u32 %r1, buf;\nst.shared.u32 [%r1+32], %r1;");
  const std::string msg = error_of(k, {1, 1, 1}, {1, 1, 1}, {});
  EXPECT_NE(msg.find("store of 4 bytes at shared address 0x20 is out of bounds: the CTA's shared "
                     "memory [0x0, 0x20)"),
            std::string::npos)
      << msg;
}

TEST_F(SimTest, GenericAddressingReachesSharedLocalAndGlobal) {
  KernelSource k("generic");
  k.param(Type::u64, "out")
      .regs(Type::b32, "%r", 6)
      .regs(Type::b64, "%rd", 6)
      .shared(Type::b32, "buf", 4)
      .local(Type::b32, "scratch", 4);
  k.code(R"(
    mov.u64 %rd1, buf;
    cvta.shared.u64 %rd2, %rd1;
    st.u32 [%rd2+4], 11;
    ld.shared.u32 %r1, [buf+4];
    mov.u64 %rd3, scratch;
    cvta.local.u64 %rd4, %rd3;
    st.u32 [%rd4+8], 22;
    ld.local.u32 %r2, [scratch+8];
    cvta.to.shared.u64 %rd5, %rd2;
    ld.shared.u32 %r3, [%rd5+4];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    st.v2.u32 [%rd1], {%r1, %r2};
    st.global.u32 [%rd1+8], %r3;
    mov.u32 %r4, %dynamic_smem_size;
    st.global.u32 [%rd1+12], %r4;
  )");
  auto out = zeros<std::uint32_t>(4);
  run(k, {1, 1, 1}, {1, 1, 1}, {arg_u64(out)}, 96);
  EXPECT_EQ(download<std::uint32_t>(out, 4), (std::vector<std::uint32_t>{11, 22, 11, 96}));
}

TEST_F(SimTest, DynamicSharedMemoryAndModuleVariables) {
  KernelSource k("module_vars");
  k.extern_shared("dyn");
  ptx::Variable table{.space = ptx::Space::const_, .type = Type::u32, .name = "table", .dims = {3}};
  table.init = ptx::Initializer{
      .elements = {{ptx::Operand::imm(5)}, {ptx::Operand::imm(6)}, {ptx::Operand::imm(7)}}};
  ptx::Variable counter{.space = ptx::Space::global, .type = Type::u32, .name = "counter"};
  counter.init = ptx::Initializer{ptx::Operand::imm(40)};
  k.module_variable(table).module_variable(counter);
  k.param(Type::u64, "out").regs(Type::b32, "%r", 6).regs(Type::b64, "%rd", 3);
  k.code(R"(
    mov.u32 %r0, dyn;
    st.shared.u32 [%r0+1020], 9;
    ld.shared.u32 %r1, [dyn+1020];
    ld.const.u32 %r2, [table+8];
    atom.global.add.u32 %r3, [counter], 2;
    ld.global.u32 %r4, [counter];
    ld.param.u64 %rd1, [out];
    st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
  )");
  auto out = zeros<std::uint32_t>(4);
  run(k, {1, 1, 1}, {1, 1, 1}, {arg_u64(out)}, 1024);
  EXPECT_EQ(download<std::uint32_t>(out, 4), (std::vector<std::uint32_t>{9, 7, 40, 42}));
  // Without the dynamic bytes the same store is out of bounds.
  const std::string msg = error_of(k, {1, 1, 1}, {1, 1, 1}, {arg_u64(out)});
  EXPECT_NE(msg.find("shared address 0x3fc is out of bounds"), std::string::npos) << msg;
}

TEST_F(SimTest, AtomicsAreAtomicAcrossParallelCtas) {
  KernelSource k("atomics");
  k.param(Type::u64, "p")
      .regs(Type::b32, "%r", 6)
      .regs(Type::b64, "%rd", 2)
      .regs(Type::f32, "%f", 2);
  k.code(R"(
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    red.global.add.u32 [%rd1], 1;
    atom.global.max.s32 %r3, [%rd1+4], %r2;
    atom.global.min.u32 %r3, [%rd1+8], %r1;
    red.global.add.f32 [%rd1+12], 0f3F000000;
    atom.global.inc.u32 %r3, [%rd1+16], 9;
    atom.global.or.b32 %r3, [%rd1+20], 4;
    atom.global.add.u64 %rd0, [%rd1+24], 3;
    atom.global.exch.b32 %r3, [%rd1+32], 77;
    atom.global.cas.b32 %r4, [%rd1+36], 0, %r2;
    atom.global.dec.u32 %r3, [%rd1+40], 1000;
  )");
  std::vector<std::uint32_t> init(11, 0);
  init[2] = 1000;   // min
  init[10] = 5000;  // dec: above the bound, resets to it
  auto p = upload(init);
  run(k, {64, 1, 1}, {128, 1, 1}, {arg_u64(p)});
  auto h = download<std::uint32_t>(p, 11);
  EXPECT_EQ(h[0], 64u * 128u);
  EXPECT_EQ(h[1], 63u);
  EXPECT_EQ(h[2], 0u);
  float f;
  std::memcpy(&f, &h[3], 4);
  EXPECT_EQ(f, 64 * 128 * 0.5f);
  EXPECT_EQ(h[4], (64u * 128u) % 10u);  // inc wraps past 9
  EXPECT_EQ(h[5], 4u);
  EXPECT_EQ(h[6] | (std::uint64_t{h[7]} << 32), 3u * 64u * 128u);
  EXPECT_EQ(h[8], 77u);
  EXPECT_LT(h[9], 64u);  // some CTA won the compare-and-swap
  EXPECT_EQ(h[10], 1000u - (64u * 128u - 1u) % 1001u);
}

// red.global.add.v4.f32 (PTX ISA 9.7.13.8): each of the four elements is
// added atomically, from every thread of 64 CTAs (sums exact in f32).
TEST_F(SimTest, VectorRedAddsEachElementAtomically) {
  KernelSource k("vector_red");
  k.param(Type::u64, "p").regs(Type::b64, "%rd", 2).regs(Type::f32, "%f", 4);
  k.code(R"(
    ld.param.u64 %rd1, [p];
    mov.f32 %f0, 0f3F000000;
    mov.f32 %f1, 0f3F800000;
    mov.f32 %f2, 0fC0000000;
    mov.f32 %f3, 0f3E800000;
    red.global.add.v4.f32 [%rd1+16], {%f0, %f1, %f2, %f3};
    red.global.add.v2.f32 [%rd1+8], {%f3, %f2};
  )");
  auto p = upload(std::vector<float>{1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f});
  run(k, {64, 1, 1}, {128, 1, 1}, {arg_u64(p)});
  const auto h = download<float>(p, 8);
  const float n = 64 * 128;
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], 0.0f);
  EXPECT_EQ(h[2], n * 0.25f);
  EXPECT_EQ(h[3], n * -2.0f);
  EXPECT_EQ(h[4], n * 0.5f);
  EXPECT_EQ(h[5], n * 1.0f);
  EXPECT_EQ(h[6], n * -2.0f);
  EXPECT_EQ(h[7], n * 0.25f);
}

TEST_F(SimTest, VectorAtomicsOtherThanRedGlobalAddF32AreRefused) {
  const auto refusal = [&](const std::string& line) {
    KernelSource k("vector_atomic");
    k.param(Type::u64, "p").regs(Type::b32, "%r", 4).regs(Type::b64, "%rd", 2).regs(Type::f32, "%f", 4);
    k.code("ld.param.u64 %rd1, [p];\nmov.u32 %r0, 0;\n" + line);
    auto p = zeros<float>(8);
    return error_of(k, {1, 1, 1}, {1, 1, 1}, {arg_u64(p)});
  };
  std::string msg = refusal("red.shared.add.v4.f32 [%r0], {%f0, %f1, %f2, %f3};");
  EXPECT_NE(msg.find("a vector atomic is red.global.add.v2/.v4.f32 only"), std::string::npos) << msg;
  msg = refusal("red.global.add.v4.f32 [%rd1], {%f0, %f1};");
  EXPECT_NE(msg.find("red's source must be a vector of 4 registers"), std::string::npos) << msg;
}

TEST_F(SimTest, CpAsyncDataIsVisibleOnlyAfterTheWait) {
  KernelSource k("cp_async");
  k.param(Type::u64, "in")
      .param(Type::u64, "out")
      .regs(Type::b32, "%r", 12)
      .regs(Type::b64, "%rd", 4)
      .shared(Type::b32, "tile", 16);
  k.code(R"(
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r0, tile;
    cp.async.cg.shared.global [%r0], [%rd1], 16;
    cp.async.ca.shared.global [%r0+16], [%rd1+16], 8, 4;
    cp.async.commit_group;
    cp.async.ca.shared.global [%r0+32], [%rd1+32], 4;
    cp.async.commit_group;
    ld.shared.u32 %r1, [tile];
    cp.async.wait_group 1;
    ld.shared.u32 %r2, [tile];
    ld.shared.u32 %r3, [tile+16];
    ld.shared.u32 %r4, [tile+20];
    ld.shared.u32 %r5, [tile+32];
    cp.async.wait_all;
    ld.shared.u32 %r6, [tile+32];
    st.global.v2.u32 [%rd2], {%r1, %r2};
    st.global.v4.u32 [%rd2+16], {%r3, %r4, %r5, %r6};
  )");
  std::vector<std::uint32_t> in(16);
  for (std::uint32_t i = 0; i < 16; ++i) in[i] = 100 + i;
  auto din = upload(in);
  auto dout = zeros<std::uint32_t>(8);
  run(k, {1, 1, 1}, {1, 1, 1}, {arg_u64(din), arg_u64(dout)});
  auto h = download<std::uint32_t>(dout, 8);
  EXPECT_EQ(h[0], 0u);    // before any wait: the old contents
  EXPECT_EQ(h[1], 100u);  // the first group has landed
  EXPECT_EQ(h[4], 104u);  // src-size 4 of 8: the first word copied ...
  EXPECT_EQ(h[5], 0u);    // ... the rest zero-filled
  EXPECT_EQ(h[6], 0u);    // the second group is still in flight
  EXPECT_EQ(h[7], 108u);
}

}  // namespace
}  // namespace warpforge::sim::testing
