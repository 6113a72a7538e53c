// The simulator's MFMA lane/register mapping, checked for every lane and
// register: against layout/'s MFMA atom for v_mfma_f32_32x32x8 bf16 and
// against AMD's published operand tables (closed forms below) for the others.
// Each test runs one MFMA on random operands placed by the layout under test
// and compares every accumulator register of every lane with a reference.
#include <functional>

#include "amd_test_support.hpp"
#include "warpforge/amdgpu/kernel.hpp"
#include "warpforge/layout/mfma_atom.hpp"

namespace warpforge::amdgpu::testing {
namespace {

struct At {
  int row, col;
};
// Where (lane, value) of an operand lives in its matrix.
using Placement = std::function<At(int lane, int value)>;

// Per lane: A and B as four 16-bit values at A + 8·lane, C and D as R floats at
// C + 4·(R·lane + r).
KernelIR mfma_kernel(Mfma m) {
  AmdKernel k("mfma_probe", Target::gfx942, 64);
  Val a = k.param_ptr("A"), b = k.param_ptr("B"), c = k.param_ptr("C"), d = k.param_ptr("D");
  Val lane = k.workitem_id(0);
  const int regs = info(info(m).accumulator).elements;
  Val a_frag = k.bitcast(Type::v4i16, k.load(Type::v2i32, k.ptr_add(a, lane * 8)));
  Val b_frag = k.load(Type::v4i16, k.ptr_add(b, lane * 8));
  Val acc = k.reg(info(m).accumulator);
  for (int r = 0; r < regs; ++r)
    k.insert(acc, r, k.load(Type::f32, k.ptr_add(c, (lane * regs + r) * 4)));
  Val out = k.reg(info(m).accumulator);
  k.mfma(m, out, a_frag, b_frag, acc);
  for (int r = 0; r < regs; ++r) k.store(k.ptr_add(d, (lane * regs + r) * 4), k.extract(out, r));
  return k.ir();
}

void expect_mapping(Mfma m, const Placement& pa, const Placement& pb, const Placement& pc) {
  const MfmaInfo& mi = info(m);
  const int regs = info(mi.accumulator).elements;
  Bf16Matrix a = random_bf16(static_cast<std::size_t>(mi.m * mi.k), !mi.bf16);
  Bf16Matrix b = random_bf16(static_cast<std::size_t>(mi.k * mi.n), !mi.bf16);
  std::vector<float> c(static_cast<std::size_t>(mi.m * mi.n));
  std::normal_distribution<float> normal;
  for (auto& x : c) x = normal(rng());
  // A is m x k, B k x n, C m x n, all row-major on the host.
  std::vector<std::uint16_t> a_lanes(64 * 4), b_lanes(64 * 4);
  std::vector<float> c_lanes(static_cast<std::size_t>(64 * regs));
  for (int lane = 0; lane < 64; ++lane) {
    for (int v = 0; v < 4; ++v) {
      At x = pa(lane, v), y = pb(lane, v);
      a_lanes[lane * 4 + v] = a.bits[x.row * mi.k + x.col];
      b_lanes[lane * 4 + v] = b.bits[y.row * mi.n + y.col];
    }
    for (int r = 0; r < regs; ++r) {
      At z = pc(lane, r);
      c_lanes[lane * regs + r] = c[z.row * mi.n + z.col];
    }
  }
  sim::GlobalMemory mem;
  std::uint64_t da = upload(mem, a_lanes), db = upload(mem, b_lanes), dc = upload(mem, c_lanes);
  std::uint64_t dd = poisoned_f32(mem, c_lanes.size());
  sim::amdgpu::run(mfma_kernel(m), {}, {da, db, dc, dd}, mem);
  std::vector<float> d = download<float>(mem, dd, c_lanes.size());
  for (int lane = 0; lane < 64; ++lane)
    for (int r = 0; r < regs; ++r) {
      At z = pc(lane, r);
      double want = c[z.row * mi.n + z.col];
      for (int p = 0; p < mi.k; ++p)
        want += double(a.values[z.row * mi.k + p]) * b.values[p * mi.n + z.col];
      ASSERT_NEAR(d[lane * regs + r], want, 1e-5 + 1e-5 * std::fabs(want))
          << mi.name << " lane " << lane << " register " << r << " (D[" << z.row << "][" << z.col
          << "])";
    }
}

Placement from_fragment(const layout::Fragment& f) {
  return [f](int lane, int value) {
    layout::AxisPoint at = f.layout({{layout::Axis::lane, lane}, {layout::Axis::value, value}});
    return At{static_cast<int>(at.at(layout::Axis::row)),
              static_cast<int>(at.at(layout::Axis::col))};
  };
}

TEST(AmdMfmaMapping, Bf16_32x32x8MatchesTheLayoutAtomForEveryLaneAndRegister) {
  layout::MfmaAtom atom = layout::mfma_f32_32x32x8_bf16();
  ASSERT_EQ(atom.m, 32);
  ASSERT_EQ(atom.k, 8);
  expect_mapping(Mfma::f32_32x32x8_bf16, from_fragment(atom.a), from_fragment(atom.b),
                 from_fragment(atom.c));
}

// AMD's tables for one block of a 32x32x8 MFMA (AMD Matrix Instruction
// Calculator): A[i][k] in lane i + 32 (k / 4), element k % 4; B[k][j] in lane
// j + 32 (k / 4); D[i][j] in lane j + 32 ((i / 4) % 2), register 4 (i / 8) + i % 4.
const Placement k32A = [](int l, int v) { return At{l % 32, 4 * (l / 32) + v}; };
const Placement k32B = [](int l, int v) { return At{4 * (l / 32) + v, l % 32}; };
const Placement k32C = [](int l, int r) { return At{8 * (r / 4) + 4 * (l / 32) + r % 4, l % 32}; };
// 16x16x16: A[i][k] in lane i + 16 (k / 4); B[k][j] in lane j + 16 (k / 4);
// D[i][j] in lane j + 16 (i / 4), register i % 4.
const Placement k16A = [](int l, int v) { return At{l % 16, 4 * (l / 16) + v}; };
const Placement k16B = [](int l, int v) { return At{4 * (l / 16) + v, l % 16}; };
const Placement k16C = [](int l, int r) { return At{4 * (l / 16) + r, l % 16}; };

TEST(AmdMfmaMapping, F16_32x32x8MatchesAmdTables) {
  expect_mapping(Mfma::f32_32x32x8_f16, k32A, k32B, k32C);
}
TEST(AmdMfmaMapping, Bf16_16x16x16MatchesAmdTables) {
  expect_mapping(Mfma::f32_16x16x16_bf16, k16A, k16B, k16C);
}
TEST(AmdMfmaMapping, F16_16x16x16MatchesAmdTables) {
  expect_mapping(Mfma::f32_16x16x16_f16, k16A, k16B, k16C);
}

class AmdMfmaCompiles : public ::testing::TestWithParam<Target> {};

TEST_P(AmdMfmaCompiles, EachMfmaWrapperBecomesItsInstruction) {
  Target t = GetParam();
  for (Mfma m : kAllMfma) {
    KernelIR kernel = mfma_kernel(m);
    std::string dis = compiled_disassembly(kernel, t);
    EXPECT_EQ(count(dis, mnemonic(m, t) + " "), 1)
        << info(m).name << " on " << to_string(t) << ":\n"
        << dis;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, AmdMfmaCompiles,
                         ::testing::Values(Target::gfx90a, Target::gfx942),
                         [](const auto& info) { return to_string(info.param); });

TEST(AmdMfmaMapping, PartialExecMaskIsRefused) {
  AmdKernel k("mfma_diverged", Target::gfx942, 64);
  Val d = k.param_ptr("D");
  Val lane = k.workitem_id(0);
  Val acc = k.reg(Type::v4f32), a = k.reg(Type::v4i16);
  for (int i = 0; i < 4; ++i) {
    k.insert(acc, i, 0.0f);
    k.insert(a, i, 0);
  }
  k.if_then(lane < 32, [&] { k.mfma(Mfma::f32_16x16x16_f16, acc, a, a, acc); });
  k.store(d, k.extract(acc, 0));
  sim::GlobalMemory mem;
  std::uint64_t dd = poisoned_f32(mem, 1);
  try {
    sim::amdgpu::run(k.ir(), {}, {dd}, mem);
    FAIL() << "no error";
  } catch (const SimError& e) {
    EXPECT_NE(std::string(e.what()).find("MFMA with a partial exec mask"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("mfma_diverged"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace warpforge::amdgpu::testing
