#include <gtest/gtest.h>

#include <regex>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/ptx/ptxas.hpp"
#include "warpforge/tile/warp_copy.hpp"
#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::tile {
namespace {

using namespace dsl;

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void expect_assembles(const Kernel& k, const char* arch) {
  if (!ptx::find_ptxas()) return;  // the text checks above stand alone
  auto r = ptx::run_ptxas(k.ptx(), arch);
  EXPECT_TRUE(r.ok) << r.log << k.ptx();
}

struct Tiles {
  RegisterTile d, a, b, c;
};

Tiles make(Kernel& k, const layout::MmaAtom& atom, int m, int n, int kk, Type in = bf16) {
  return {RegisterTile::allocate(k, atom.c, m, n, f32, "d"), RegisterTile::allocate(k, atom.a, m, kk, in, "a"),
          RegisterTile::allocate(k, atom.b, kk, n, in, "b"), RegisterTile::allocate(k, atom.c, m, n, f32, "c")};
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const TileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no TileError";
  return {};
}

TEST(WarpGemm, UnrollsANestOfK16Atoms) {
  Kernel k("nest", Target::sm_80);
  auto t = make(k, layout::mma_m16n8k16_f16(), 64, 32, 32);
  EXPECT_EQ(warp::gemm(k, t.d, t.a, t.b, t.c, 1.0f, 1.0f), "mma.sync.m16n8k16");
  std::string text = k.ptx();
  EXPECT_EQ(occurrences(text, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), 4 * 4 * 2);
  // beta = 1: the first k step reads C, the second accumulates in D.
  EXPECT_NE(text.find("{%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%c0, %c1, %c2, %c3};"),
            std::string::npos) << text;
  EXPECT_NE(text.find("{%d0, %d1, %d2, %d3}, {%a16, %a17, %a18, %a19}, {%b2, %b3}, {%d0, %d1, %d2, %d3};"),
            std::string::npos) << text;
  expect_assembles(k, "sm_80");
}

TEST(WarpGemm, BetaZeroClearsTheAccumulatorAndNeedsNoC) {
  Kernel k("beta0", Target::sm_80);
  auto t = make(k, layout::mma_m16n8k16_f16(), 16, 8, 16, f16);
  warp::gemm(k, t.d, t.a, t.b, std::nullopt);
  std::string text = k.ptx();
  EXPECT_EQ(occurrences(text, "mov.f32 %d"), 4);
  EXPECT_NE(text.find("{%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%d0, %d1, %d2, %d3};"),
            std::string::npos) << text;
  expect_assembles(k, "sm_80");
}

TEST(WarpGemm, FallsBackToK8WhenKIsEight) {
  Kernel k("k8", Target::sm_80);
  auto t = make(k, layout::mma_m16n8k8_f16(), 32, 16, 8, f16);
  EXPECT_EQ(warp::gemm(k, t.d, t.a, t.b, std::nullopt), "mma.sync.m16n8k8");
  EXPECT_EQ(occurrences(k.ptx(), "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"), 2 * 2);
  expect_assembles(k, "sm_80");
}

TEST(WarpGemm, DispatchFollowsTheRegisterLayout) {
  Kernel k("layouts", Target::sm_80);
  const auto k16 = layout::mma_m16n8k16_f16(), k8 = layout::mma_m16n8k8_f16();
  auto b = RegisterTile::allocate(k, k16.b, 16, 8, f16, "b");
  // One row of m16n8k8 A atoms is register for register one m16n8k16 A atom.
  auto d_one = RegisterTile::allocate(k, k16.c, 16, 8, f32, "d_one");
  auto a_one = RegisterTile::allocate(k, k8.a, 16, 16, f16, "a_one");
  EXPECT_EQ(warp::gemm(k, d_one, a_one, b, std::nullopt), "mma.sync.m16n8k16");
  // Two rows of them are not: the k16 candidate refuses and k8 takes over.
  auto d_two = RegisterTile::allocate(k, k16.c, 32, 8, f32, "d_two");
  auto a_two = RegisterTile::allocate(k, k8.a, 32, 16, f16, "a_two");
  EXPECT_EQ(warp::gemm(k, d_two, a_two, b, std::nullopt), "mma.sync.m16n8k8");
  EXPECT_EQ(occurrences(k.ptx(), "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"), 2 * 2);
  expect_assembles(k, "sm_80");
}

TEST(WarpGemm, RefusalsListEveryCandidateAndReason) {
  Kernel k("refuse", Target::sm_80);
  auto t = make(k, layout::mma_m16n8k16_f16(), 16, 8, 16);
  auto f16_b = RegisterTile::allocate(k, layout::mma_m16n8k16_f16().b, 16, 8, f16, "b_half");
  std::string m = refusal([&] { warp::gemm(k, t.d, t.a, f16_b, t.c, 2.0f, 0.5f); });
  EXPECT_NE(m.find("warp::gemm: no candidate fits the operands:"), std::string::npos) << m;
  EXPECT_NE(m.find("  mma.sync.m16n8k16:\n    - A and B are bf16 and f16; needs both f16 or both bf16"), std::string::npos) << m;
  EXPECT_NE(m.find("  mma.sync.m16n8k8:"), std::string::npos) << m;
  EXPECT_NE(m.find("alpha = 2.000000; mma.sync computes alpha = 1 only"), std::string::npos) << m;
  EXPECT_NE(m.find("beta = 0.500000; needs 0 or 1"), std::string::npos) << m;
}

TEST(WarpGemm, RefusesEachOperandProblem) {
  Kernel k("each", Target::sm_80);
  const auto k16 = layout::mma_m16n8k16_f16();
  auto t = make(k, k16, 16, 8, 16);
  EXPECT_NE(refusal([&] { warp::gemm(k, t.d, t.a, t.b, std::nullopt, 1.0f, 1.0f); }).find("beta = 1 needs C"),
            std::string::npos);
  auto wide_b = RegisterTile::allocate(k, k16.b, 16, 16, bf16, "wide_b");
  EXPECT_NE(refusal([&] { warp::gemm(k, t.d, t.a, wide_b, std::nullopt); })
                .find("shapes do not chain: D 16x8, A 16x16, B 16x16 (need A MxK, B KxN, C and D MxN)"),
            std::string::npos);
  auto h = RegisterTile::allocate(k, layout::mma_m16n8k16_f16().a, 16, 16, f16, "h");
  auto acc16 = RegisterTile::allocate(k, k16.a, 16, 8 * 2, f16, "acc_half");  // 16-bit "accumulator"
  std::string m = refusal([&] { warp::gemm(k, acc16, h, t.b, std::nullopt); });
  EXPECT_NE(m.find("D is f16; needs f32"), std::string::npos) << m;
  auto c16 = RegisterTile::allocate(k, k16.a, 16, 8 * 2, f16, "c_half");
  EXPECT_NE(refusal([&] { warp::gemm(k, t.d, t.a, t.b, c16, 1.0f, 1.0f); }).find("C is f16; needs f32"),
            std::string::npos);
  // K = 8 is not a multiple of 16 (k16 refuses) and the k8 candidate reads the
  // registers as k8 atoms (which they are): so k8 is chosen.
  auto a8 = RegisterTile::allocate(k, layout::mma_m16n8k8_f16().a, 16, 8, bf16, "a_short");
  auto b8 = RegisterTile::allocate(k, layout::mma_m16n8k8_f16().b, 8, 8, bf16, "b_short");
  EXPECT_EQ(warp::gemm(k, t.d, a8, b8, std::nullopt), "mma.sync.m16n8k8");
  // B held in A-operand fragments matches neither candidate's B layout.
  auto a16 = RegisterTile::allocate(k, k16.a, 16, 16, bf16, "a_wide");
  auto b_as_a = RegisterTile::allocate(k, k16.a, 16, 16, bf16, "b_as_a");
  auto d_wide = RegisterTile::allocate(k, k16.c, 16, 16, f32, "d_wide");
  m = refusal([&] { warp::gemm(k, d_wide, a16, b_as_a, std::nullopt); });
  EXPECT_NE(m.find("B registers are not laid out as mma.m16n8k16.f16.B tiles"), std::string::npos) << m;
  EXPECT_NE(m.find("B registers are not laid out as mma.m16n8k8.f16.B tiles"), std::string::npos) << m;
}

TEST(WarpCopy, LoadsFragmentsFromGlobalWithOneAccessPerRegister) {
  Kernel k("global", Target::sm_80);
  Reg p = k.param_ptr("p", 4);
  Reg ld = k.param(u32, "ld");
  auto a = RegisterTile::allocate(k, layout::mma_m16n8k16_f16().a, 32, 16, bf16, "a");
  warp::copy(k, GlobalTile{p, 16, true}, a);   // immediate ld: constant offsets
  warp::copy(k, GlobalTile{p, ld, true}, a);  // runtime ld
  auto d = RegisterTile::allocate(k, layout::mma_m16n8k16_f16().c, 16, 8, f32, "d");
  warp::copy(k, d, GlobalTile{p, 8, true});
  std::string text = k.ptx();
  EXPECT_EQ(occurrences(text, "ld.global.b32 %a"), 2 * 8);
  EXPECT_EQ(occurrences(text, "st.global.f32 ["), 4);
  // Register a2 holds row g, columns 8 + 2t: 16 bytes past a0 in a 16-wide row.
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(ld\.global\.b32 %a2, \[%rd\d+\+16\];)"))) << text;
  expect_assembles(k, "sm_80");
}

TEST(WarpCopy, RefusesRegistersWhoseElementsAreNotAdjacent) {
  Kernel k("adjacent", Target::sm_80);
  Reg p = k.param_ptr("p", 4);
  auto a = RegisterTile::allocate(k, layout::mma_m16n8k16_f16().a, 16, 16, f16, "a");
  std::string m = refusal([&] { warp::copy(k, GlobalTile{p, 16, false}, a); });
  EXPECT_NE(m.find("register 0 of a[16x16] f16 warp (mma.m16n8k16.f16.A x 1x1) holds elements that are not adjacent "
                   "in a column-major tile"),
            std::string::npos) << m;
}

TEST(WarpCopy, UsesLdmatrixX4AndTransWhereTheLayoutNeedsIt) {
  Kernel k("smem", Target::sm_90a);
  Shared s = k.shared("tile", 64 * 32 * 2, 128);
  Reg base = k.address_of(s);
  const auto atom = layout::mma_m16n8k16_f16();
  auto a = RegisterTile::allocate(k, atom.a, 64, 32, f16, "a");
  EXPECT_EQ(warp::copy(k, SharedTile{base, 32, true}, a), "ldmatrix.x4 x8");
  auto b = RegisterTile::allocate(k, atom.b, 32, 32, f16, "b");
  EXPECT_EQ(warp::copy(k, SharedTile{base, 32, false}, b), "ldmatrix.x4 x4");  // Bᵀ rows: plain
  EXPECT_EQ(warp::copy(k, SharedTile{base, 32, true}, b), "ldmatrix.x4.trans x4");  // B rows: transposed
  auto swz = layout::smem_swizzle(layout::SmemSwizzle::b64, 2);
  EXPECT_EQ(warp::copy(k, SharedTile{base, 32, true, swz}, a), "ldmatrix.x4 x8");
  EXPECT_EQ(warp::copy(k, a, SharedTile{base, 32, true, swz}), "stmatrix.x4 x8");
  std::string text = k.ptx();
  EXPECT_EQ(occurrences(text, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), 4);
  EXPECT_NE(text.find("xor.b32"), std::string::npos);
  expect_assembles(k, "sm_90a");
}

TEST(WarpCopy, RefusesWhatLdmatrixCannotMove) {
  Kernel k("bad_smem", Target::sm_80);
  Shared s = k.shared("tile", 4096, 128);
  Reg base = k.address_of(s);
  auto d = RegisterTile::allocate(k, layout::mma_m16n8k16_f16().c, 16, 8, f32, "d");
  EXPECT_NE(refusal([&] { warp::copy(k, SharedTile{base, 8, true}, d); })
                .find("has 32-bit elements; ldmatrix and stmatrix move 16-bit elements"),
            std::string::npos);
  auto a = RegisterTile::allocate(k, layout::mma_m16n8k16_f16().a, 16, 16, f16, "a");
  EXPECT_NE(refusal([&] { warp::copy(k, SharedTile{base, 20, true}, a); })
                .find("ld = 20 elements puts rows off the 16-byte alignment that ldmatrix needs; use a multiple of 8"),
            std::string::npos);
  EXPECT_THROW(warp::copy(k, a, SharedTile{base, 16, true}), TargetError);  // stmatrix needs sm_90
}

}  // namespace
}  // namespace warpforge::tile
