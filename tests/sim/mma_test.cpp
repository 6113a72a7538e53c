// mma.sync shapes and types with integer-valued inputs (exact results), and
// ldmatrix/stmatrix x1/x2/x4 with and without .trans. The host packs
// fragments from the PTX ISA tables (9.7.14.5.7-9) written out in this file.
#include <functional>

#include "../../src/sim/float_format.hpp"
#include "sim_harness.hpp"

namespace warpforge::sim::testing {
namespace {

using ptx::Type;

struct Shape {
  const char* name;
  int k;
};

// Lane `lane`'s slot `s` of A (16×K), B (K×8) and C/D (16×8), per the ISA tables.
std::pair<int, int> a_pos(int k, int lane, int s) {
  const int g = lane / 4, t = lane % 4;
  if (k == 32) return {g + 8 * ((s / 4) % 2), 4 * t + s % 4 + 16 * (s / 8)};
  return {g + 8 * ((s / 2) % 2), 2 * t + s % 2 + 8 * (s / 4)};
}
std::pair<int, int> b_pos(int k, int lane, int s) {
  const int g = lane / 4, t = lane % 4;
  if (k == 32) return {4 * t + s % 4 + 16 * (s / 4), g};
  return {2 * t + s % 2 + 8 * (s / 2), g};
}
std::pair<int, int> c_pos(int lane, int s) {
  return {lane / 4 + 8 * (s / 2), 2 * (lane % 4) + s % 2};
}

std::uint32_t encode(Type t, double v) {
  if (t == Type::f32) return static_cast<std::uint32_t>(bits_of(static_cast<float>(v)));
  return encode_float(v, float_format(t), Rounding::rn, false);
}
double decode(Type t, std::uint32_t bits) {
  return t == Type::f32 ? f32_of(bits) : decode_float(bits, float_format(t));
}

// Packs a fragment: `slots` elements of `type` per lane into 32-bit registers.
std::vector<std::uint32_t> pack(Type type, int slots,
                                const std::function<std::pair<int, int>(int, int)>& pos,
                                const std::function<double(int, int)>& value) {
  const int bits = ptx::bits(type), per_reg = 32 / bits, regs = slots / per_reg;
  std::vector<std::uint32_t> out(static_cast<std::size_t>(32 * regs));
  for (int lane = 0; lane < 32; ++lane)
    for (int s = 0; s < slots; ++s) {
      const auto [r, c] = pos(lane, s);
      out[static_cast<std::size_t>(lane * regs + s / per_reg)] |= encode(type, value(r, c))
                                                                  << (bits * (s % per_reg));
    }
  return out;
}

class Mma : public SimTest {
 protected:
  // Runs one mma.sync with the given operands and returns D[16][8].
  std::vector<double> run_mma(Shape shape, Type dt, Type at, Type bt, Type ct,
                              const std::function<double(int, int)>& a,
                              const std::function<double(int, int)>& b,
                              const std::function<double(int, int)>& c) {
    const int in_bits = ptx::bits(at);
    const int a_slots = 16 * shape.k / 32, b_slots = 8 * shape.k / 32;
    const int na = a_slots * in_bits / 32, nb = b_slots * in_bits / 32, nc = 4 * ptx::bits(ct) / 32,
              nd = 4 * ptx::bits(dt) / 32;
    auto fa = upload(pack(
        at, a_slots, [&](int l, int s) { return a_pos(shape.k, l, s); }, a));
    auto fb = upload(pack(
        bt, b_slots, [&](int l, int s) { return b_pos(shape.k, l, s); }, b));
    auto fc = upload(pack(ct, 4, c_pos, c));
    auto fd = zeros<std::uint32_t>(static_cast<std::size_t>(32 * nd));

    auto regs = [](const std::string& p, int first, int n) {
      std::string s = "{";
      for (int i = 0; i < n; ++i) s += (i ? ", " : "") + p + std::to_string(first + i);
      return s + "}";
    };
    std::string code = "mov.u32 %r0, %laneid;\n";
    auto load = [&](const char* param, int first, int n) {
      code += "ld.param.u64 %rd0, [" + std::string(param) + "];\n";
      code += "mul.wide.u32 %rd1, %r0, " + std::to_string(4 * n) + ";\nadd.u64 %rd0, %rd0, %rd1;\n";
      for (int i = 0; i < n; ++i)
        code += "ld.global.u32 %r" + std::to_string(first + i) + ", [%rd0+" +
                std::to_string(4 * i) + "];\n";
    };
    load("A", 1, na);
    load("B", 5, nb);
    load("C", 7, nc);
    code += "mma.sync.aligned." + std::string(shape.name) + ".row.col." +
            std::string(ptx::name(dt)) + "." + std::string(ptx::name(at)) + "." +
            std::string(ptx::name(bt)) + "." + std::string(ptx::name(ct)) + " " +
            regs("%r", 11, nd) + ", " + regs("%r", 1, na) + ", " + regs("%r", 5, nb) + ", " +
            regs("%r", 7, nc) + ";\n";
    code += "ld.param.u64 %rd0, [D];\nmul.wide.u32 %rd1, %r0, " + std::to_string(4 * nd) +
            ";\nadd.u64 %rd0, %rd0, %rd1;\n";
    for (int i = 0; i < nd; ++i)
      code +=
          "st.global.u32 [%rd0+" + std::to_string(4 * i) + "], %r" + std::to_string(11 + i) + ";\n";

    KernelSource k("mma");
    k.param(Type::u64, "A").param(Type::u64, "B").param(Type::u64, "C").param(Type::u64, "D");
    k.regs(Type::b32, "%r", 16).regs(Type::b64, "%rd", 2).code(code);
    run(k, {1, 1, 1}, {32, 1, 1}, {arg_u64(fa), arg_u64(fb), arg_u64(fc), arg_u64(fd)});

    auto raw = download<std::uint32_t>(fd, static_cast<std::size_t>(32 * nd));
    std::vector<double> d(16 * 8);
    const int dbits = ptx::bits(dt), per_reg = 32 / dbits;
    for (int lane = 0; lane < 32; ++lane)
      for (int s = 0; s < 4; ++s) {
        const auto [r, c2] = c_pos(lane, s);
        const std::uint32_t reg = raw[static_cast<std::size_t>(lane * nd + s / per_reg)];
        const std::uint32_t bits = dbits == 32 ? reg : (reg >> (16 * (s % per_reg))) & 0xFFFF;
        d[static_cast<std::size_t>(r * 8 + c2)] = decode(dt, bits);
      }
    return d;
  }

  void expect_product(Shape shape, Type dt, Type at, Type bt, Type ct,
                      const std::function<double(int, int)>& a,
                      const std::function<double(int, int)>& b,
                      const std::function<double(int, int)>& c) {
    auto d = run_mma(shape, dt, at, bt, ct, a, b, c);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        double want = c(m, n);
        for (int k = 0; k < shape.k; ++k) want += a(m, k) * b(k, n);
        EXPECT_EQ(d[static_cast<std::size_t>(m * 8 + n)], want)
            << shape.name << " m=" << m << " n=" << n;
      }
  }
};

double small_a(int m, int k) {
  return (m + 2 * k) % 7 - 3;
}
double small_b(int k, int n) {
  return (3 * k + n) % 5 - 2;
}
double small_c(int m, int n) {
  return m - 2 * n;
}

TEST_F(Mma, DocumentedM16n8k8Demo) {
  // REFERENCE.md example 1: every element of row r of D is r + 9.
  auto d = run_mma(
      {"m16n8k8", 8}, Type::f32, Type::f16, Type::f16, Type::f32,
      [](int m, int k) { return k == 0 ? m : 1.0; }, [](int k, int) { return k == 1 ? 3.0 : 1.0; },
      [](int, int) { return 0.0; });
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n)
      EXPECT_EQ(d[static_cast<std::size_t>(m * 8 + n)], m + 9) << m << "," << n;
}

TEST_F(Mma, M16n8k8Bf16AndF16Accumulate) {
  expect_product({"m16n8k8", 8}, Type::f32, Type::bf16, Type::bf16, Type::f32, small_a, small_b,
                 small_c);
  expect_product({"m16n8k8", 8}, Type::f16, Type::f16, Type::f16, Type::f16, small_a, small_b,
                 small_c);
}

TEST_F(Mma, M16n8k16AllInputAndAccumulatorTypes) {
  expect_product({"m16n8k16", 16}, Type::f32, Type::bf16, Type::bf16, Type::f32, small_a, small_b,
                 small_c);
  expect_product({"m16n8k16", 16}, Type::f32, Type::f16, Type::f16, Type::f32, small_a, small_b,
                 small_c);
  expect_product({"m16n8k16", 16}, Type::f16, Type::f16, Type::f16, Type::f16, small_a, small_b,
                 small_c);
}

TEST_F(Mma, M16n8k32Fp8) {
  expect_product({"m16n8k32", 32}, Type::f32, Type::e4m3, Type::e4m3, Type::f32, small_a, small_b,
                 small_c);
  expect_product({"m16n8k32", 32}, Type::f32, Type::e4m3, Type::e5m2, Type::f32, small_a, small_b,
                 small_c);
  expect_product({"m16n8k32", 32}, Type::f32, Type::e5m2, Type::e5m2, Type::f32, small_a, small_b,
                 small_c);
  expect_product({"m16n8k32", 32}, Type::f16, Type::e4m3, Type::e4m3, Type::f16, small_a, small_b,
                 small_c);
}

TEST_F(Mma, M16n8k32Fp8IntoF32AddsAsAnH100) {
  // One recorded case (tests/gpu_truth/mma_sync.truth, unit
  // mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32, NVIDIA H100):
  // row 0 of A, column 0 of B and C[0][0]; the rest zero. The H100 gives
  // 0x45499003; the exact sum rounded once, and the f16 rule in one step of
  // 32, both give 0x45499004. The H100's rule (mma.cpp): the products in
  // two steps of 16 (k % 4 < 2, then the others) from zero, then C added
  // in f32.
  const std::uint8_t a_row[32] = {0x9a, 0xa4, 0x9e, 0xe5, 0x35, 0x48, 0x37, 0xec, 0x08, 0x6e, 0xc8,
                                  0xb7, 0xb4, 0x68, 0xa7, 0x25, 0x35, 0x12, 0x60, 0x4e, 0x17, 0x49,
                                  0xd4, 0x0a, 0x4d, 0xe1, 0x52, 0x60, 0x26, 0xb7, 0xd4, 0x15};
  const std::uint8_t b_col[32] = {0xdc, 0x85, 0x29, 0xbd, 0xe0, 0xce, 0x1e, 0xdc, 0x65, 0xb9, 0xd6,
                                  0x09, 0xd7, 0x4f, 0x35, 0x65, 0xa7, 0x51, 0xcd, 0x3f, 0x93, 0x56,
                                  0xe5, 0x86, 0xc8, 0x2b, 0xcc, 0x3f, 0xb0, 0xbb, 0x9b, 0x00};
  const double c00 = f32_of(0x3c74c799u);
  auto d = run_mma(
      {"m16n8k32", 32}, Type::f32, Type::e4m3, Type::e4m3, Type::f32,
      [&](int m, int k) { return m == 0 ? decode(Type::e4m3, a_row[k]) : 0.0; },
      [&](int k, int n) { return n == 0 ? decode(Type::e4m3, b_col[k]) : 0.0; },
      [&](int m, int n) { return m == 0 && n == 0 ? c00 : 0.0; });
  EXPECT_EQ(bits_of(static_cast<float>(d[0])), 0x45499003u);
  EXPECT_EQ(d[1], 0.0);  // control: the other elements are C's zeros
}

TEST_F(Mma, DistinctValuesPinEveryFragmentSlot) {
  // A = e_{m,k} indicator-like values make each D element depend on one A row
  // and one B column: a swapped slot would change the result.
  expect_product(
      {"m16n8k16", 16}, Type::f32, Type::bf16, Type::bf16, Type::f32,
      [](int m, int k) { return m * 16 + k; },
      [](int k, int n) { return (k == n || k == n + 8) ? k + 1 : 0; },
      [](int m, int n) { return 1000 * m + n; });
}

// ldmatrix / stmatrix: matrix i, row r, col c holds 1000·i + 10·r + c.
class Ldmatrix : public SimTest {
 protected:
  // Each lane's registers after ldmatrix .x<n>[.trans], and shared memory
  // after stmatrix with the same shape writes those registers back to a
  // second region (with `store_trans`).
  std::pair<std::vector<std::uint32_t>, std::vector<std::uint16_t>> run_ldst(int n, bool trans,
                                                                             bool store_trans) {
    std::vector<std::uint16_t> in(4 * 64);
    for (int i = 0; i < 4; ++i)
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c)
          in[static_cast<std::size_t>(i * 64 + r * 8 + c)] =
              static_cast<std::uint16_t>(1000 * i + 10 * r + c);
    auto src = upload(in);
    auto regs_out = zeros<std::uint32_t>(32 * 4);
    auto mem_out = zeros<std::uint16_t>(4 * 64);
    std::string regs = "{";
    for (int i = 0; i < n; ++i) regs += (i ? ", %r" : "%r") + std::to_string(4 + i);
    regs += "}";
    const std::string shape = ".x" + std::to_string(n);
    KernelSource k("ldst");
    k.param(Type::u64, "in").param(Type::u64, "regs_out").param(Type::u64, "mem_out");
    k.regs(Type::b32, "%r", 10)
        .regs(Type::b64, "%rd", 4)
        .shared(Type::b16, "tile", 256)
        .shared(Type::b16, "back", 256);
    k.code(R"(
      mov.u32 %r0, %laneid;
      ld.param.u64 %rd0, [in];
      mul.wide.u32 %rd1, %r0, 16;
      add.u64 %rd0, %rd0, %rd1;
      ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd0];
      mov.u32 %r1, tile;
      mad.lo.u32 %r1, %r0, 16, %r1;
      st.shared.v4.u32 [%r1], {%r4, %r5, %r6, %r7};
      mov.u32 %r4, 0; mov.u32 %r5, 0; mov.u32 %r6, 0; mov.u32 %r7, 0;
      bar.warp.sync -1;
      ldmatrix.sync.aligned.m8n8)" +
           shape + (trans ? ".trans" : "") + ".shared.b16 " + regs + R"(, [%r1];
      ld.param.u64 %rd2, [regs_out];
      add.u64 %rd2, %rd2, %rd1;
      st.global.v4.u32 [%rd2], {%r4, %r5, %r6, %r7};
      mov.u32 %r2, back;
      mad.lo.u32 %r2, %r0, 16, %r2;
      stmatrix.sync.aligned.m8n8)" +
           shape + (store_trans ? ".trans" : "") + ".shared.b16 [%r2], " + regs + R"(;
      bar.warp.sync -1;
      ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r2];
      ld.param.u64 %rd2, [mem_out];
      add.u64 %rd2, %rd2, %rd1;
      st.global.v4.u32 [%rd2], {%r4, %r5, %r6, %r7};
    )");
    run(k, {1, 1, 1}, {32, 1, 1}, {arg_u64(src), arg_u64(regs_out), arg_u64(mem_out)});
    return {download<std::uint32_t>(regs_out, 32 * 4), download<std::uint16_t>(mem_out, 4 * 64)};
  }
};

TEST_F(Ldmatrix, EveryShapeWithAndWithoutTrans) {
  for (int n : {1, 2, 4})
    for (bool trans : {false, true}) {
      auto [regs, mem] = run_ldst(n, trans, trans);
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < n; ++i) {
          const int a = lane / 4, b = 2 * (lane % 4);
          // (row, col) of the two halves
          const int r0 = trans ? b : a, c0 = trans ? a : b, r1 = trans ? b + 1 : a,
                    c1 = trans ? a : b + 1;
          const std::uint32_t want = static_cast<std::uint32_t>(1000 * i + 10 * r0 + c0) |
                                     (static_cast<std::uint32_t>(1000 * i + 10 * r1 + c1) << 16);
          EXPECT_EQ(regs[static_cast<std::size_t>(lane * 4 + i)], want)
              << "x" << n << (trans ? ".trans" : "") << " lane " << lane << " reg " << i;
        }
      // stmatrix with the same .trans is ldmatrix's inverse: the matrices come back.
      for (int e = 0; e < n * 64; ++e)
        EXPECT_EQ(mem[static_cast<std::size_t>(e)], 1000 * (e / 64) + 10 * (e % 64 / 8) + e % 8)
            << "x" << n << " " << e;
    }
}

TEST_F(Ldmatrix, StmatrixTransStoresTheTranspose) {
  auto [regs, mem] = run_ldst(4, false, true);
  for (int i = 0; i < 4; ++i)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c)
        EXPECT_EQ(mem[static_cast<std::size_t>(i * 64 + r * 8 + c)], 1000 * i + 10 * c + r)
            << i << " " << r << " " << c;
}

}  // namespace
}  // namespace warpforge::sim::testing
