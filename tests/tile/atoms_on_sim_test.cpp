// The layout atoms against the simulator's independent semantics (written
// from the PTX ISA's fragment tables, not from layout/): kernels move data
// with warp::copy (layout-driven) and compute with mma.sync / ldmatrix /
// stmatrix as the simulator executes them; every lane and register is seen
// because every element carries a distinct value.
#include <gtest/gtest.h>

#include <span>

#include "warpforge/dsl.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/tile/warp_copy.hpp"
#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::tile {
namespace {

using namespace dsl;
using runtime::Buffer;
using runtime::Device;

std::vector<std::uint16_t> to_f16(const std::vector<float>& v) {
  std::vector<std::uint16_t> out;
  for (float x : v) out.push_back(ops::f32_to_f16_bits(x));
  return out;
}

template <class T>
Buffer upload(const Device& dev, const std::vector<T>& v) {
  Buffer b(dev, v.size() * sizeof(T));
  b.upload(std::span<const T>(v));
  return b;
}

// D (m×n f32) = A (m×k f16, row-major) · B (given as Bᵀ, n×k row-major), one atom.
std::vector<float> run_atom(const layout::MmaAtom& atom, const std::vector<float>& a, const std::vector<float>& bt) {
  Kernel k("atom_check", Target::sm_90a);
  Reg pa = k.param_ptr("A", 4), pb = k.param_ptr("BT", 4), pd = k.param_ptr("D", 4);
  auto ta = RegisterTile::allocate(k, atom.a, atom.m, atom.k, f16, "a");
  auto tb = RegisterTile::allocate(k, atom.b, atom.k, atom.n, f16, "b");
  auto td = RegisterTile::allocate(k, atom.c, atom.m, atom.n, f32, "d");
  warp::copy(k, GlobalTile{pa, atom.k, true}, ta);
  warp::copy(k, GlobalTile{pb, atom.k, false}, tb);
  warp::gemm(k, td, ta, tb, std::nullopt);
  warp::copy(k, td, GlobalTile{pd, atom.n, true});
  Device dev = Device::sim();
  runtime::Module m(dev, k.module());
  Buffer da = upload(dev, to_f16(a)), db = upload(dev, to_f16(bt)), dd(dev, atom.m * atom.n * 4);
  dd.fill(0xFF);
  m.launch("atom_check", {.grid = {1}, .block = {32}}, {da, db, dd});
  return dd.download<float>(static_cast<std::size_t>(atom.m * atom.n));
}

class MmaAtomOnSim : public ::testing::TestWithParam<int> {
 protected:
  layout::MmaAtom atom() const { return GetParam() == 8 ? layout::mma_m16n8k8_f16() : layout::mma_m16n8k16_f16(); }
};

TEST_P(MmaAtomOnSim, BAndDLayoutsAgreeWithTheSimulator) {
  const auto at = atom();
  const int M = 16, N = 8, K = static_cast<int>(at.k);
  // A picks row m % K of B, scaled by 1 + m / K so that every D element differs.
  std::vector<float> a(M * K), bt(N * K);
  for (int m = 0; m < M; ++m) a[m * K + m % K] = static_cast<float>(1 + m / K);
  for (int kk = 0; kk < K; ++kk)
    for (int n = 0; n < N; ++n) bt[n * K + kk] = static_cast<float>(1 + kk * N + n);
  auto d = run_atom(at, a, bt);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      EXPECT_EQ(d[m * N + n], static_cast<float>((1 + m / K) * (1 + (m % K) * N + n))) << "m " << m << " n " << n;
}

TEST_P(MmaAtomOnSim, ALayoutAgreesWithTheSimulator) {
  const auto at = atom();
  const int M = 16, N = 8, K = static_cast<int>(at.k);
  std::vector<float> a(M * K);
  for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>(1 + i);
  for (int j = 0; j < K / 8; ++j) {
    // B selects columns 8j .. 8j + 7 of A.
    std::vector<float> bt(N * K);
    for (int n = 0; n < N; ++n) bt[n * K + n + 8 * j] = 1.0f;
    auto d = run_atom(at, a, bt);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) EXPECT_EQ(d[m * N + n], a[m * K + n + 8 * j]) << "m " << m << " n " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(K, MmaAtomOnSim, ::testing::Values(8, 16));

// mma.m16n8k32 with e4m3 operands. e4m3 holds few integers exactly, so the
// operands carry single bits (0 or 1.0 = 0x38) of each element's index, one
// bit per launch, and D = A·B reads them back.
class Fp8AtomOnSim : public ::testing::Test {
 protected:
  static constexpr int M = 16, N = 8, K = 32;
  static constexpr std::uint8_t kOne = 0x38;  // 1.0 in e4m3 (bias 7)

  Fp8AtomOnSim() : device_(Device::sim()), module_(device_, build()) {}

  static ptx::Module build() {
    const auto atom = layout::mma_m16n8k32_f8();
    Kernel k("fp8_atom_check", Target::sm_90a);
    Reg pa = k.param_ptr("A", 4), pb = k.param_ptr("BT", 4), pd = k.param_ptr("D", 4);
    auto a = RegisterTile::allocate(k, atom.a, M, K, e4m3, "a");
    auto b = RegisterTile::allocate(k, atom.b, K, N, e4m3, "b");
    auto d = RegisterTile::allocate(k, atom.c, M, N, f32, "d");
    warp::copy(k, GlobalTile{pa, K, true}, a);
    warp::copy(k, GlobalTile{pb, K, false}, b);
    for (const auto& r : d.regs()) k.mov(r, imm_f32(0.0f));
    k.mma_sync(MmaShape::m16n8k32, e4m3, e4m3, f32, d.regs(), a.regs(), b.regs(), d.regs());
    warp::copy(k, d, GlobalTile{pd, N, true});
    return k.module();
  }

  std::vector<float> run(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& bt) {
    Buffer da = upload(device_, a), db = upload(device_, bt), dd(device_, M * N * 4);
    dd.fill(0xFF);
    module_.launch("fp8_atom_check", {.grid = {1}, .block = {32}}, {da, db, dd});
    return dd.download<float>(M * N);
  }

  Device device_;
  runtime::Module module_;
};

TEST_F(Fp8AtomOnSim, BAndDLayoutsAgreeWithTheSimulator) {
  // A[m][k] = [k == m] + 2·[k == m + 16]: D[m][n] = B[m][n] + 2·B[m + 16][n].
  std::vector<std::uint8_t> a(M * K, 0);
  for (int m = 0; m < M; ++m) {
    a[m * K + m] = kOne;
    a[m * K + m + 16] = 0x40;  // 2.0
  }
  auto id = [](int kk, int n) { return kk * N + n; };  // 0 .. 255
  for (int bit = 0; bit < 8; ++bit) {
    std::vector<std::uint8_t> bt(N * K, 0);
    for (int kk = 0; kk < K; ++kk)
      for (int n = 0; n < N; ++n) bt[n * K + kk] = (id(kk, n) >> bit) & 1 ? kOne : 0;
    auto d = run(a, bt);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n)
        EXPECT_EQ(d[m * N + n], float(((id(m, n) >> bit) & 1) + 2 * ((id(m + 16, n) >> bit) & 1)))
            << "bit " << bit << " m " << m << " n " << n;
  }
}

TEST_F(Fp8AtomOnSim, ALayoutAgreesWithTheSimulator) {
  auto id = [](int m, int kk) { return m * K + kk; };  // 0 .. 511
  for (int j = 0; j < K / N; ++j) {
    // B selects columns 8j .. 8j + 7 of A.
    std::vector<std::uint8_t> bt(N * K, 0);
    for (int n = 0; n < N; ++n) bt[n * K + n + N * j] = kOne;
    for (int bit = 0; bit < 9; ++bit) {
      std::vector<std::uint8_t> a(M * K);
      for (int m = 0; m < M; ++m)
        for (int kk = 0; kk < K; ++kk) a[m * K + kk] = (id(m, kk) >> bit) & 1 ? kOne : 0;
      auto d = run(a, bt);
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n)
          EXPECT_EQ(d[m * N + n], float((id(m, n + N * j) >> bit) & 1)) << "j " << j << " bit " << bit;
    }
  }
}

// Global -> registers (layout), registers -> shared (stmatrix), shared ->
// registers (ldmatrix), registers -> global (layout): the data must come back.
struct RoundTrip {
  bool b_operand;  // a B tile (K×N) instead of an A tile (M×K)
  bool smem_row_major;
  bool swizzled;
};

class LdmatrixOnSim : public ::testing::TestWithParam<RoundTrip> {};

TEST_P(LdmatrixOnSim, StmatrixThenLdmatrixReturnsEveryElement) {
  const RoundTrip p = GetParam();
  const auto atom = layout::mma_m16n8k16_f16();
  const int rows = p.b_operand ? 32 : 64, cols = 32;
  Kernel k("ldmatrix_check", Target::sm_90a);
  Reg in = k.param_ptr("in", 4), out = k.param_ptr("out", 4), raw = k.param_ptr("raw", 4);
  Shared s = k.shared("tile", rows * cols * 2, 128);
  const auto& frag = p.b_operand ? atom.b : atom.a;
  auto t1 = RegisterTile::allocate(k, frag, rows, cols, f16, "first");
  auto t2 = RegisterTile::allocate(k, frag, rows, cols, f16, "second");
  const std::int64_t ld = p.smem_row_major ? cols : rows;
  layout::Swizzle swz = p.swizzled ? layout::smem_swizzle(layout::SmemSwizzle::b64, 2) : layout::Swizzle{};
  // B tiles keep each register's pair along K, so they read column-major from global.
  GlobalTile gin{in, p.b_operand ? rows : cols, !p.b_operand}, gout{out, p.b_operand ? rows : cols, !p.b_operand};
  warp::copy(k, gin, t1);
  warp::copy(k, t1, SharedTile{k.address_of(s), ld, p.smem_row_major, swz});
  k.bar_warp_sync();
  // Dump shared memory as it lies, so the host can check where stmatrix put each element.
  Reg base = k.address_of(s), lane = k.sreg(SReg::laneid);
  for (int word = 0; word < rows * cols / 2; word += 32) {
    Reg index = lane + word;
    Reg v = k.reg(b32);
    k.ld(Space::shared, b32, v, at(base + (index << 2)));
    Reg wide = k.reg(u64);
    k.mul_wide(wide, index, 4);
    k.st(Space::global, b32, at(raw + wide), v);
  }
  warp::copy(k, SharedTile{k.address_of(s), ld, p.smem_row_major, swz}, t2);
  warp::copy(k, t2, gout);

  std::vector<float> values(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);  // exact in f16 below 2048
  Device dev = Device::sim();
  runtime::Module m(dev, k.module());
  Buffer din = upload(dev, to_f16(values)), dout(dev, values.size() * 2), draw(dev, values.size() * 2);
  dout.fill(0xFF);
  draw.fill(0xFF);
  m.launch("ldmatrix_check", {.grid = {1}, .block = {32}}, {din, dout, draw});
  auto back = dout.download<std::uint16_t>(values.size());
  EXPECT_EQ(back, to_f16(values));
  // The tile element (r, c) was given as values[r·cols + c] (A, row-major) or
  // values[c·rows + r] (B, column-major); in shared memory it must sit at
  // swizzle(r·ld + c) (row-major) or swizzle(c·ld + r).
  auto smem = draw.download<std::uint16_t>(values.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      float v = p.b_operand ? values[c * rows + r] : values[r * cols + c];
      std::int64_t at_offset = swz(p.smem_row_major ? r * ld + c : c * ld + r);
      ASSERT_EQ(smem[static_cast<std::size_t>(at_offset)], ops::f32_to_f16_bits(v)) << "r " << r << " c " << c;
    }
}

INSTANTIATE_TEST_SUITE_P(Orientations, LdmatrixOnSim,
                         ::testing::Values(RoundTrip{false, true, false}, RoundTrip{false, true, true},
                                           RoundTrip{false, false, false}, RoundTrip{true, true, false},
                                           RoundTrip{true, false, false}, RoundTrip{true, false, true}));

}  // namespace
}  // namespace warpforge::tile
