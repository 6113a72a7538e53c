// wgmma.mma_async on the simulator against a double-precision reference:
// A and B from shared memory in every layout the GEMM kernels use (K-major
// and MN-major, no swizzle and 32/64/128-byte swizzles), f16/bf16/e4m3
// inputs, f32 and f16 accumulators, scale-d and imm-scale-a, descriptors
// advanced along K; and the warpgroup rules. The kernels and images are
// wgmma_kernels.hpp's.
#include <cmath>

#include "../../src/sim/float_format.hpp"
#include "hopper_harness.hpp"
#include "wgmma_kernels.hpp"

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

class WgmmaTest : public HopperTest {
 protected:
  // Random inputs of the case's type (bits) with their values.
  std::vector<std::uint32_t> random_elements(Type t, std::size_t n, std::vector<double>& values) {
    std::vector<std::uint32_t> bits(n);
    values.resize(n);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (std::size_t i = 0; i < n; ++i) {
      double v = u(rng);
      if (std::abs(v) < 0.1) v = 0.75;  // never zero
      bits[i] = encode_float(v, float_format(t), Rounding::rn, true);
      values[i] = decode_float(bits[i], float_format(t));
    }
    return bits;
  }

  void check(const Case& c) {
    const bool half = c.atype == Type::f16 || c.atype == Type::bf16;
    const int k = half ? 16 : 32, kk = 2 * k;  // two K slices
    std::vector<double> av, bv;
    const auto abits = random_elements(c.atype, 64 * kk, av);  // A[m][k]
    const auto bbits = random_elements(c.atype, static_cast<std::size_t>(c.n) * kk, bv);  // B[n][k]
    const WgmmaImage img = wgmma_image(c, abits, bbits);
    const std::vector<std::uint8_t>& image = img.bytes;
    const std::uint64_t image_bytes = image.size();
    const int regs = c.dtype == Type::f32 ? c.n / 2 : c.n / 4;
    const auto in = upload(image);
    auto out = upload(std::vector<std::uint32_t>(128 * regs, 0xFFFFFFFFu));
    const auto d = wgmma_descriptors(c, img.b_base);
    run_ptx(kernel(c, image_bytes), "wg", {.grid = {1}, .block = {128}},
            {arg_u64(in), arg_u64(out), arg_u64(d[0]), arg_u64(d[1]), arg_u64(d[2]), arg_u64(d[3])});
    const auto got = download<std::uint32_t>(out, 128 * static_cast<std::size_t>(regs));
    for (int t = 0; t < 128; ++t) {
      const int warp = t / 32, lane = t % 32;
      for (int i = 0; i < c.n / 2; ++i) {
        // the accumulator figure: rows 16*warp + lane/4 (+8), columns 8*(i/4) + 2*(lane%4) (+1)
        const int row = 16 * warp + lane / 4 + 8 * ((i % 4) / 2);
        const int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        double want = 0, magnitude = 0;  // magnitude: the sum of |products|, which bounds every partial sum
        for (int x = 0; x < kk; ++x) {
          const double product = (x < k && c.negate_a ? -1 : 1) * av[static_cast<std::size_t>(row * kk + x)] *
                                 bv[static_cast<std::size_t>(col * kk + x)];
          want += product;
          magnitude += std::abs(product);
        }
        const std::uint32_t word = got[static_cast<std::size_t>(t * regs + (c.dtype == Type::f32 ? i : i / 2))];
        const double value = c.dtype == Type::f32
                                 ? f32_of(word)
                                 : decode_float((word >> (16 * (i % 2))) & 0xFFFF, kF16);
        // An f16 accumulator rounds after each of the two wgmma (and the sum
        // inside one may round too): at most three roundings of 2^-11 of a
        // partial sum, each no larger than `magnitude`.
        // An f32 accumulator of FP8 products keeps 13 bits (the H100's rule,
        // src/sim/tensor_core_sum.hpp): per wgmma at most 33 cut terms and
        // one cut sum, each below 2^-13 of `magnitude`.
        const bool fp8 = ptx::bits(c.atype) == 8;
        const double tol = c.dtype != Type::f32 ? 2e-3 * std::max(1.0, magnitude)
                           : fp8                ? 2 * 34 * 0x1p-13 * std::max(1.0, magnitude)
                                                : 1e-5;
        ASSERT_NEAR(value, want, tol) << "thread " << t << " element " << i << " (row " << row << ", col " << col
                                      << ")";
      }
    }
  }
};

TEST_F(WgmmaTest, EveryLayoutTheGemmKernelsUse) {
  for (const NamedCase& c : wgmma_layout_cases()) {
    SCOPED_TRACE(c.name);
    check(c.c);
  }
}

TEST_F(WgmmaTest, SharedMemoryIsReadWhenWaitGroupRetiresTheWgmma) {
  // B is overwritten between the wgmma's issue and its wait_group (a race the
  // ISA leaves undefined): the simulator reads as late as allowed, so D is
  // A * B' — a kernel that releases a stage before waiting shows it.
  const Layout l{false, 0, 128, 256};
  std::vector<double> av, bv, bv2;
  const auto abits = random_elements(Type::bf16, 64 * 16, av);
  const auto bbits = random_elements(Type::bf16, 8 * 16, bv);
  const auto bbits2 = random_elements(Type::bf16, 8 * 16, bv2);
  std::vector<std::uint16_t> first(2048 + 256, 0), second(2048 + 256, 0);
  for (int k = 0; k < 16; ++k) {
    for (int m = 0; m < 64; ++m)
      first[place(l, m, k, 2) / 2] = second[place(l, m, k, 2) / 2] = static_cast<std::uint16_t>(abits[m * 16 + k]);
    for (int n = 0; n < 8; ++n) {
      first[(2048 + place(l, n, k, 2)) / 2] = static_cast<std::uint16_t>(bbits[n * 16 + k]);
      second[(2048 + place(l, n, k, 2)) / 2] = static_cast<std::uint16_t>(bbits2[n * 16 + k]);
    }
  }
  const std::string text = ptx_module(R"(
.visible .entry late(.param .u64 first, .param .u64 second, .param .u64 out, .param .u64 da, .param .u64 db)
{
  .reg .b32 %r<16>;
  .reg .b32 %d<4>;
  .reg .b64 %rd<16>;
  .reg .pred %p<2>;
  .shared .align 1024 .b8 buf[2304];
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, buf;
  shl.b32 %r4, %r1, 2;
  add.u32 %r5, %r3, %r4;
  mul.wide.u32 %rd1, %r1, 4;
  ld.param.u64 %rd2, [first];
  add.u64 %rd2, %rd2, %rd1;
  ld.param.u64 %rd3, [second];
  add.u64 %rd3, %rd3, %rd1;
  setp.lt.u32 %p1, %r1, 576;
  @%p1 ld.global.u32 %r6, [%rd2];
  @%p1 st.shared.u32 [%r5], %r6;
  add.u64 %rd2, %rd2, 512;
  add.u32 %r7, %r5, 512;
  ld.global.u32 %r6, [%rd2];
  st.shared.u32 [%r7], %r6;
  add.u64 %rd2, %rd2, 512;
  add.u32 %r7, %r7, 512;
  ld.global.u32 %r6, [%rd2];
  st.shared.u32 [%r7], %r6;
  add.u64 %rd2, %rd2, 512;
  add.u32 %r7, %r7, 512;
  ld.global.u32 %r6, [%rd2];
  st.shared.u32 [%r7], %r6;
  setp.lt.u32 %p1, %r1, 64;
  add.u64 %rd2, %rd2, 512;
  add.u32 %r7, %r7, 512;
  @%p1 ld.global.u32 %r6, [%rd2];
  @%p1 st.shared.u32 [%r7], %r6;
  bar.sync 0;
  fence.proxy.async.shared::cta;
  ld.param.u64 %rd4, [da];
  ld.param.u64 %rd5, [db];
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %rd4, %rd5, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  setp.lt.u32 %p1, %r1, 64;
  add.u64 %rd3, %rd3, 2048;
  add.u32 %r7, %r5, 2048;
  @%p1 ld.global.u32 %r6, [%rd3];
  @%p1 st.shared.u32 [%r7], %r6;
  bar.sync 0;
  wgmma.wait_group.sync.aligned 0;
  ld.param.u64 %rd6, [out];
  mul.wide.u32 %rd7, %r1, 16;
  add.u64 %rd6, %rd6, %rd7;
  st.global.v4.b32 [%rd6], {%d0, %d1, %d2, %d3};
  ret;
}
)");
  auto out = upload(std::vector<float>(512, -1.f));
  run_ptx(text, "late", {.grid = {1}, .block = {128}},
          {arg_u64(upload(first)), arg_u64(upload(second)), arg_u64(out), arg_u64(descriptor(0, l)),
           arg_u64(descriptor(2048, l))});
  const auto got = download<float>(out, 512);
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 4; ++i) {
      const int row = 16 * (t / 32) + t % 32 / 4 + 8 * (i / 2), col = 2 * (t % 4) + i % 2;
      double want = 0;
      for (int k = 0; k < 16; ++k) want += av[static_cast<std::size_t>(row * 16 + k)] * bv2[static_cast<std::size_t>(col * 16 + k)];
      ASSERT_NEAR(got[static_cast<std::size_t>(t * 4 + i)], want, 1e-5) << "thread " << t << " element " << i;
    }
}

TEST_F(WgmmaTest, AWarpThatSkipsAWarpgroupInstructionIsADeadlock) {
  const std::string text = ptx_module(R"(
.visible .entry k()
{
  .reg .b32 %r<4>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 96;
  @%p1 bra SKIP;
  wgmma.fence.sync.aligned;
SKIP:
  bar.sync 1, 32;
  ret;
}
)");
  const std::string msg = ptx_error(text, "k", {.grid = {1}, .block = {128}}, {});
  EXPECT_NE(msg.find("deadlock in kernel 'k', block (0,0,0):"), std::string::npos) << msg;
  EXPECT_NE(msg.find("warp 0 waits at the warpgroup instruction at PTX line"), std::string::npos) << msg;
  EXPECT_NE(msg.find("for the other warps of warpgroup 0: warp 3 exited;"), std::string::npos) << msg;
}

TEST_F(WgmmaTest, AccumulatorsInFlightAreOffLimitsUntilTheirGroupIsWaitedFor) {
  const std::string text = ptx_module(R"(
.visible .entry k()
{
  .reg .b32 %d<8>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  .shared .align 128 .b8 s[256];
  mov.u64 %rd1, 0;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %rd1, %rd1, 0, 1, 1, 0, 0;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %rd1, %rd1, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d4, %d5, %d6, %d7}, %rd1, %rd1, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 1;
  mov.b32 %r1, %d0;
  mov.b32 %r2, %d5;
  ret;
}
)");
  const ptx::Module m = ptx::parse(text);
  const std::string msg = ptx_error(text, "k", {.grid = {1}, .block = {128}}, {});
  EXPECT_NE(msg.find("PTX line " + std::to_string(line_of(m, "mov.b32 %r2, %d5")) +
                     " (mov.b32 %r2, %d5): block (0,0,0): operand 2 is an accumulator register of the "
                     "wgmma.mma_async at PTX line " +
                     std::to_string(line_of(m, "{%d4, %d5")) + ", which no wgmma.wait_group has waited for"),
            std::string::npos)
      << msg;
}

// A's registers are read asynchronously like shared memory (PTX ISA
// 9.7.15.7.3): wgmma.mma_async may share them, any other instruction that
// reads or writes them before the wait_group is refused.
TEST_F(WgmmaTest, ARegistersInFlightAreOffLimitsUntilTheirGroupIsWaitedFor) {
  for (const std::string touch : {"mov.b32 %r1, %a2;", "mov.b32 %a1, 5;"}) {
    const std::string text = ptx_module(R"(
.visible .entry k()
{
  .reg .b32 %d<8>;
  .reg .b32 %a<4>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  .shared .align 128 .b8 s[256];
  mov.u64 %rd1, 0;
  mov.b32 %a0, 0;
  mov.b32 %a1, 0;
  mov.b32 %a2, 0;
  mov.b32 %a3, 0;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, %rd1, 0, 1, 1, 0;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d4, %d5, %d6, %d7}, {%a0, %a1, %a2, %a3}, %rd1, 0, 1, 1, 0;
  wgmma.commit_group.sync.aligned;
  )" + touch + R"(
  wgmma.wait_group.sync.aligned 0;
  ret;
}
)");
    const ptx::Module m = ptx::parse(text);
    const std::string msg = ptx_error(text, "k", {.grid = {1}, .block = {128}}, {});
    const std::string operand = touch[9] == 'r' ? "operand 2" : "operand 1";
    EXPECT_NE(msg.find("PTX line " + std::to_string(line_of(m, touch)) + " (" + touch.substr(0, touch.size() - 1) +
                       "): block (0,0,0): " + operand + " is an A register of the wgmma.mma_async at PTX line " +
                       std::to_string(line_of(m, "{%d4, %d5")) + ", which no wgmma.wait_group has waited for"),
              std::string::npos)
        << msg;
  }
}

// One wgmma's accumulators feeding the next one's A (attention's P·V) need
// the wait_group between them; so does the reverse.
TEST_F(WgmmaTest, AWgmmaCannotTakeAsAWhatOneInFlightWritesNorWriteWhatItReads) {
  const std::string f16_acc = "wgmma.mma_async.sync.aligned.m64n16k16.f16.f16.f16 ";
  const std::string a_from = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d4, %d5, %d6, %d7}, ";
  struct Chain {
    std::string first, second, message;
  };
  const Chain chains[] = {
      {f16_acc + "{%d0, %d1, %d2, %d3}, %rd1, %rd1, 0, 1, 1, 0, 0;", a_from + "{%d0, %d1, %d2, %d3}, %rd1, 0, 1, 1, 0;",
       "A register 0 of this wgmma is an accumulator of the wgmma.mma_async at PTX line "},
      {a_from + "{%d0, %d1, %d2, %d3}, %rd1, 0, 1, 1, 0;", f16_acc + "{%d0, %d1, %d2, %d3}, %rd1, %rd1, 0, 1, 1, 0, 0;",
       "accumulator 0 of this wgmma is an A register of the wgmma.mma_async at PTX line "},
  };
  for (const Chain& c : chains) {
    const std::string text = ptx_module(R"(
.visible .entry k()
{
  .reg .b32 %d<8>;
  .reg .b64 %rd<2>;
  .shared .align 128 .b8 s[256];
  mov.u64 %rd1, 0;
  mov.b32 %d0, 0;
  mov.b32 %d1, 0;
  mov.b32 %d2, 0;
  mov.b32 %d3, 0;
  wgmma.fence.sync.aligned;
  )" + c.first + "\n  " + c.second + R"(
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ret;
}
)");
    const ptx::Module m = ptx::parse(text);
    const std::string msg = ptx_error(text, "k", {.grid = {1}, .block = {128}}, {});
    EXPECT_NE(msg.find("PTX line " + std::to_string(line_of(m, c.second.substr(0, 60))) + " "), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(c.message + std::to_string(line_of(m, c.first.substr(0, 60))) +
                       ", which no wgmma.wait_group has waited for; wait for it first (PTX ISA 9.7.15.7.3)"),
              std::string::npos)
        << msg;
  }
}

TEST_F(WgmmaTest, AWarpgroupInstructionNeedsAllFourWarps) {
  const std::string text = ptx_module(R"(
.visible .entry k()
{
  setmaxnreg.dec.sync.aligned.u32 40;
  ret;
}
)");
  const std::string msg = ptx_error(text, "k", {.grid = {1}, .block = {96}}, {});
  EXPECT_NE(msg.find("a warpgroup instruction needs all 128 threads of warpgroup 0 (warps 0-3); the block has 96 "
                     "threads"),
            std::string::npos)
      << msg;
}

TEST_F(WgmmaTest, FormsTheSimulatorDoesNotRunAreRefusedAtDecode) {
  auto refusal = [&](const std::string& line, const std::string& regs = ".reg .b32 %d<4>;") {
    return ptx_error(ptx_module(".visible .entry k(.param .u64 p)\n{\n  " + regs +
                                "\n  .reg .b64 %rd<4>;\n  " + line + "\n  ret;\n}\n"),
                     "k", {.grid = {1}, .block = {128}}, {arg_u64(0)});
  };
  // A from registers: no imm-trans-a, and four registers.
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, {%d0, %d1, %d2, "
                    "%d3}, %rd1, 1, 1, 1, 0, 0;")
                .find("expects 7 operands, has 8"),
            std::string::npos);
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%d0, %d1, %d2, %d3}, {%d0, %d1, %d2, "
                    "%d3}, %rd1, 1, 1, 1, 0;")
                .find("expects 6 operands, has 7"),
            std::string::npos);
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, {%d0, %d1, %d2}, "
                    "%rd1, 1, 1, 1, 0;")
                .find("wgmma's A from registers must be a vector of 4 .b32 registers, no immediates or _ (PTX ISA "
                      "9.7.15.5.1.1); it has 3 operands"),
            std::string::npos);
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e4m3 {%d0, %d1, %d2, %d3}, {%d0, %d1, _, %d3}, "
                    "%rd1, 1, 1, 1;")
                .find("it has 4 operands"),
            std::string::npos);
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, _, %rd2, 1, 1, 1, "
                    "0, 0;")
                .find("wgmma's A is the sink _; give A's matrix descriptor or its 4 fragment registers"),
            std::string::npos);
  // e4m3 inputs take K = 32; a shape PTX lacks (N = 12) does not even parse.
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n8k16.f32.e4m3.e4m3 {%d0, %d1, %d2, %d3}, %rd1, %rd2, 1, 1, "
                    "1;")
                .find("N = 8..256 in steps of 8"),
            std::string::npos);
  EXPECT_THROW(ptx::parse(ptx_module(".visible .entry k()\n{\n  .reg .b32 %d<4>;\n  .reg .b64 %rd<4>;\n  "
                                     "wgmma.mma_async.sync.aligned.m64n12k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, "
                                     "%rd1, %rd2, 1, 1, 1, 0, 0;\n  ret;\n}\n")),
               ParseError);
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1}, %rd1, %rd2, 1, 1, 1, 0, 0;")
                .find("wgmma's d must be a vector of 4 registers"),
            std::string::npos);
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %rd1, %rd2, 1, 2, "
                    "1, 0, 0;")
                .find("imm-scale-a/b must be the immediate 1 or -1"),
            std::string::npos);
  EXPECT_NE(refusal("setmaxnreg.inc.sync.aligned.u32 20;")
                .find("setmaxnreg's register count must be an immediate multiple of 8 in 24..256"),
            std::string::npos);
}

TEST_F(WgmmaTest, RefusesANonzeroMatrixBaseOffset) {
  const Layout l{false, 128, 16, 1024};
  Case c{.dtype = Type::f32, .atype = Type::bf16, .n = 8, .a = l, .b = l, .a_bytes = 64 * 128, .b_bytes = 8 * 128,
         .a_step = 32, .b_step = 32};
  const std::string msg = ptx_error(kernel(c, 16384), "wg", {.grid = {1}, .block = {128}},
                                    {arg_u64(upload(std::vector<std::uint8_t>(16384, 1))), arg_u64(zeros<float>(512)),
                                     arg_u64(descriptor(0, l) | 3ull << 49), arg_u64(descriptor(8192, l)),
                                     arg_u64(descriptor(32, l)), arg_u64(descriptor(8224, l))});
  EXPECT_NE(msg.find("has base offset 3; the simulator takes 0 (swizzle patterns starting on their repeat boundary)"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace warpforge::sim::testing
