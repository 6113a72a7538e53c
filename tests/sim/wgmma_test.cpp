// wgmma.mma_async on the simulator against a double-precision reference:
// A and B from shared memory in every layout the GEMM kernels use (K-major
// and MN-major, no swizzle and 32/64/128-byte swizzles), f16/bf16/e4m3
// inputs, f32 and f16 accumulators, scale-d and imm-scale-a, descriptors
// advanced along K; and the warpgroup rules. The shared-memory images are
// built here from the ISA's description of the layouts (9.7.15.5.1.2): core
// matrices of 8 rows x 16 bytes without swizzle; rows of the swizzle span,
// 8 to an atom, with each 16-byte chunk index XORed by the row within the
// atom, for the swizzled modes.
#include <cmath>

#include "hopper_harness.hpp"
#include "warpforge/sim/float_format.hpp"

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

// Where one operand lives: K-major (rows of M or N, K contiguous) or MN-major,
// the swizzle span (0, 32, 64, 128), LBO and SBO as the descriptor carries them.
struct Layout {
  bool mn_major;
  std::uint32_t span;
  std::uint64_t lbo, sbo;
};

// The byte offset of element (row, k) of an operand stored with `l`, before the swizzle.
std::uint64_t place(const Layout& l, std::uint64_t row, std::uint64_t k, std::uint64_t bytes) {
  std::uint64_t off;
  if (!l.mn_major) {
    if (l.span == 0) {  // core matrix (row/8, k-chunk): 8 rows of 16 bytes
      const std::uint64_t chunk = k * bytes / 16;
      off = row / 8 * l.sbo + chunk * l.lbo + row % 8 * 16 + k * bytes % 16;
    } else {  // atom row/8 of 8 rows of `span` bytes
      off = row / 8 * l.sbo + row % 8 * l.span + k * bytes;
    }
  } else {
    const std::uint64_t c = row * bytes;  // along M/N
    if (l.span == 0)
      off = c / 16 * l.sbo + k / 8 * l.lbo + k % 8 * 16 + c % 16;
    else
      off = c / l.span * l.lbo + k / 8 * l.sbo + k % 8 * l.span + c % l.span;
  }
  return off;
}

// The swizzle on a shared address: within each 128-byte line, the 16-byte
// chunk index is XORed with the line index modulo span/16.
std::uint64_t swizzled(std::uint64_t address, std::uint32_t span) {
  if (span == 0) return address;
  const std::uint64_t line = address / 128, chunk = address / 16 % 8;
  return line * 128 + ((chunk ^ (line % (span / 16))) * 16) + address % 16;
}

std::uint64_t descriptor(std::uint64_t start, const Layout& l) {
  const std::uint64_t mode = l.span == 128 ? 1 : l.span == 64 ? 2 : l.span == 32 ? 3 : 0;
  return (start >> 4) | (l.lbo >> 4) << 16 | (l.sbo >> 4) << 32 | mode << 62;
}

struct Case {
  Type dtype, atype;
  int n;
  Layout a, b;
  std::uint64_t a_bytes, b_bytes;  // one operand copy's footprint, K-step 0
  std::uint64_t a_step, b_step;    // the descriptor start advance to the second K slice
  bool negate_a = false;
};

std::string reg_list(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ", %d" : "%d") + std::to_string(i);
  return s;
}

// One warpgroup: copies the image to shared memory, then
//   D  = (neg?)A0 B0   (scale-d 0, over an accumulator of NaNs)
//   D += A1 B1         (scale-d = predicate true)
// and writes each thread's accumulator registers to out.
std::string kernel(const Case& c, std::uint64_t image_bytes) {
  const bool half = c.atype == Type::f16 || c.atype == Type::bf16;
  const int k = half ? 16 : 32;
  const int regs = c.dtype == Type::f32 ? c.n / 2 : c.n / 4;
  const std::string shape = "m64n" + std::to_string(c.n) + "k" + std::to_string(k);
  const std::string types = std::string(ptx::name(c.dtype)) + "." + std::string(ptx::name(c.atype)) + "." +
                            std::string(ptx::name(c.atype));
  const std::string trans = half ? std::string(", ") + (c.a.mn_major ? "1" : "0") + ", " + (c.b.mn_major ? "1" : "0") : "";
  std::string init, stores;
  for (int i = 0; i < regs; ++i) {
    init += "  mov.b32 %d" + std::to_string(i) + ", 0x7FC00000;\n";
    stores += "  st.global.b32 [%rd3+" + std::to_string(4 * i) + "], %d" + std::to_string(i) + ";\n";
  }
  return ptx_module(fill(R"(
.visible .entry wg(.param .u64 in, .param .u64 out, .param .u64 da0, .param .u64 db0, .param .u64 da1,
                   .param .u64 db1)
{
  .reg .b32 %r<16>;
  .reg .b32 %d<$REGS>;
  .reg .b64 %rd<16>;
  .reg .pred %p<4>;
  .shared .align 1024 .b8 buf[$BYTES];
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, buf;
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r7, %r1;
COPY:
  setp.ge.u32 %p3, %r7, $WORDS;
  @%p3 bra COPIED;
  mul.wide.u32 %rd4, %r7, 4;
  add.u64 %rd5, %rd1, %rd4;
  ld.global.u32 %r10, [%rd5];
  shl.b32 %r8, %r7, 2;
  add.u32 %r9, %r3, %r8;
  st.shared.u32 [%r9], %r10;
  add.u32 %r7, %r7, 128;
  bra COPY;
COPIED:
  bar.sync 0;
  fence.proxy.async.shared::cta;
  ld.param.u64 %rd6, [da0];
  ld.param.u64 %rd7, [db0];
  ld.param.u64 %rd8, [da1];
  ld.param.u64 %rd9, [db1];
$INIT
  setp.ne.u32 %p1, %r1, 1000;
  setmaxnreg.inc.sync.aligned.u32 232;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.$SHAPE.$TYPES {$D}, %rd6, %rd7, 0, $SA, 1$TRANS;
  wgmma.mma_async.sync.aligned.$SHAPE.$TYPES {$D}, %rd8, %rd9, %p1, 1, 1$TRANS;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd2, %rd2;
  mul.wide.u32 %rd3, %r1, $ROWBYTES;
  add.u64 %rd3, %rd2, %rd3;
$STORES
  ret;
}
)",
                         {{"REGS", std::to_string(regs)},
                          {"BYTES", std::to_string(image_bytes)},
                          {"WORDS", std::to_string(image_bytes / 4)},
                          {"INIT", init},
                          {"SHAPE", shape},
                          {"TYPES", types},
                          {"D", reg_list(regs)},
                          {"SA", c.negate_a ? "-1" : "1"},
                          {"TRANS", trans},
                          {"ROWBYTES", std::to_string(4 * regs)},
                          {"STORES", stores}}));
}

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
    const std::uint64_t eb = half ? 2 : 1;
    std::vector<double> av, bv;
    const auto abits = random_elements(c.atype, 64 * kk, av);  // A[m][k]
    const auto bbits = random_elements(c.atype, static_cast<std::size_t>(c.n) * kk, bv);  // B[n][k]
    // A at 0, B after A's footprint (1024-aligned); slice s at start + s*step
    const std::uint64_t a_base = 0, b_base = (c.a_bytes + c.a_step + 1023) / 1024 * 1024;
    const std::uint64_t image_bytes = (b_base + c.b_bytes + c.b_step + 1023) / 1024 * 1024;
    std::vector<std::uint8_t> image(image_bytes, 0xEE);
    auto put = [&](std::uint64_t at, std::uint32_t bits) {
      for (std::uint64_t i = 0; i < eb; ++i) image[at + i] = static_cast<std::uint8_t>(bits >> (8 * i));
    };
    // Slice s of an operand holds its K columns [s*k, (s+1)*k).
    for (int s = 0; s < 2; ++s)
      for (int kx = 0; kx < k; ++kx) {
        for (int m = 0; m < 64; ++m)
          put(swizzled(a_base + s * c.a_step + place(c.a, m, kx, eb), c.a.span),
              abits[static_cast<std::size_t>(m * kk + s * k + kx)]);
        for (int n = 0; n < c.n; ++n)
          put(swizzled(b_base + s * c.b_step + place(c.b, n, kx, eb), c.b.span),
              bbits[static_cast<std::size_t>(n * kk + s * k + kx)]);
      }
    const int regs = c.dtype == Type::f32 ? c.n / 2 : c.n / 4;
    const auto in = upload(image);
    auto out = upload(std::vector<std::uint32_t>(128 * regs, 0xFFFFFFFFu));
    run_ptx(kernel(c, image_bytes), "wg", {.grid = {1}, .block = {128}},
            {arg_u64(in), arg_u64(out), arg_u64(descriptor(a_base, c.a)), arg_u64(descriptor(b_base, c.b)),
             arg_u64(descriptor(a_base + c.a_step, c.a)), arg_u64(descriptor(b_base + c.b_step, c.b))});
    const auto got = download<std::uint32_t>(out, 128 * static_cast<std::size_t>(regs));
    for (int t = 0; t < 128; ++t) {
      const int warp = t / 32, lane = t % 32;
      for (int i = 0; i < c.n / 2; ++i) {
        // the accumulator figure: rows 16*warp + lane/4 (+8), columns 8*(i/4) + 2*(lane%4) (+1)
        const int row = 16 * warp + lane / 4 + 8 * ((i % 4) / 2);
        const int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        double want = 0;
        for (int x = 0; x < kk; ++x)
          want += (x < k && c.negate_a ? -1 : 1) * av[static_cast<std::size_t>(row * kk + x)] *
                  bv[static_cast<std::size_t>(col * kk + x)];
        const std::uint32_t word = got[static_cast<std::size_t>(t * regs + (c.dtype == Type::f32 ? i : i / 2))];
        const double value = c.dtype == Type::f32
                                 ? f32_of(word)
                                 : decode_float((word >> (16 * (i % 2))) & 0xFFFF, kF16);
        const double tol = c.dtype == Type::f32 ? 1e-5 : 4e-3 * std::max(1.0, std::abs(want));
        ASSERT_NEAR(value, want, tol) << "thread " << t << " element " << i << " (row " << row << ", col " << col
                                      << ")";
      }
    }
  }
};

TEST_F(WgmmaTest, Bf16KMajorCoreMatricesWithoutSwizzle) {
  // 8x16-byte core matrices: K chunks 128 bytes apart (LBO), 8-row groups 512 (SBO).
  const Layout l{false, 0, 128, 512};
  check({.dtype = Type::f32, .atype = Type::bf16, .n = 8, .a = l, .b = l, .a_bytes = 8 * 512, .b_bytes = 512,
         .a_step = 256, .b_step = 256});
}

TEST_F(WgmmaTest, F16KMajor128BSwizzleAdvancedAlongKInsideTheAtom) {
  // 64-element rows of 128 bytes as a 128B-swizzled TMA box leaves them; the
  // second K slice starts 32 bytes into each row.
  const Layout l{false, 128, 16, 1024};
  check({.dtype = Type::f32, .atype = Type::f16, .n = 128, .a = l, .b = l, .a_bytes = 64 * 128,
         .b_bytes = 128 * 128, .a_step = 32, .b_step = 32});
}

TEST_F(WgmmaTest, Bf16MnMajor128BSwizzleWithTwoBlocksAlongN) {
  // K rows of 64 M/N elements; 8-row atoms 1024 apart (SBO); B's second 64
  // columns 4096 further (LBO, after its 32 K rows); K slices 16 rows apart.
  const Layout a{true, 128, 8192, 1024}, b{true, 128, 4096, 1024};
  check({.dtype = Type::f32, .atype = Type::bf16, .n = 128, .a = a, .b = b, .a_bytes = 32 * 128,
         .b_bytes = 2 * 4096, .a_step = 2048, .b_step = 2048});
}

TEST_F(WgmmaTest, F16MnMajorCoreMatricesWithoutSwizzle) {
  // core matrices of 8 K rows x 16 bytes of M/N: K groups 128 apart (LBO),
  // M/N groups 512 apart (SBO)
  const Layout l{true, 0, 128, 512};
  check({.dtype = Type::f32, .atype = Type::f16, .n = 16, .a = l, .b = l, .a_bytes = 8 * 512, .b_bytes = 2 * 512,
         .a_step = 256, .b_step = 256});
}

TEST_F(WgmmaTest, F16AccumulatorWith64BSwizzleAndNegatedA) {
  const Layout l{false, 64, 16, 512};
  check({.dtype = Type::f16, .atype = Type::f16, .n = 24, .a = l, .b = l, .a_bytes = 8 * 512, .b_bytes = 3 * 512,
         .a_step = 32, .b_step = 32, .negate_a = true});
}

TEST_F(WgmmaTest, E4m3With32BSwizzle) {
  // 32-byte rows hold one K slice of 32 fp8 values; the second slice is the
  // next tile.
  const Layout l{false, 32, 16, 256};
  check({.dtype = Type::f32, .atype = Type::e4m3, .n = 16, .a = l, .b = l, .a_bytes = 8 * 256, .b_bytes = 2 * 256,
         .a_step = 8 * 256, .b_step = 2 * 256});
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

TEST_F(WgmmaTest, FormsTheSimulatorDoesNotRunAreRefusedAtLoad) {
  auto refusal = [&](const std::string& line, const std::string& regs = ".reg .b32 %d<4>;") {
    return ptx_error(ptx_module(".visible .entry k(.param .u64 p)\n{\n  " + regs +
                                "\n  .reg .b64 %rd<4>;\n  " + line + "\n  ret;\n}\n"),
                     "k", {.grid = {1}, .block = {128}}, {arg_u64(0)});
  };
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, {%d0, %d1, %d2, "
                    "%d3}, %rd1, 1, 1, 1, 0, 0;")
                .find("wgmma with A from registers is not simulated; give A's matrix descriptor"),
            std::string::npos);
  EXPECT_NE(refusal("wgmma.mma_async.sync.aligned.m64n12k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %rd1, %rd2, 1, 1, "
                    "1, 0, 0;")
                .find("N = 8..256 in steps of 8"),
            std::string::npos);
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
