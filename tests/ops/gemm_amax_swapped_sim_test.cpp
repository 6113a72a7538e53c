// The swapped kernel of GemmAmax (A to bf16 by a pre-pass in fragment
// order, B's codes converted into wgmma's register fragments, Cᵀ = B·Aᵀ) on
// the simulator against the CPU reference: every format into every C dtype,
// M and N that are no multiple of a tile, several token tiles, split K,
// L = 1 and 3, the NaN rules of amax, NaN in the scale layout's padding, a
// caller's workspace, its refusals and when automatic selection takes it.
// Its exactness on cancelling inputs is in gemm_amax_exactness_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>

#include "gemm_amax_test_support.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

GemmAmaxCase swapped_case(ScaledFormat f, DType c_dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                          std::int64_t l) {
  GemmAmaxCase c;
  c.ab = f.ab, c.sf = f.sf, c.vec = f.vec, c.c = c_dtype, c.m = m, c.n = n, c.k = k, c.l = l;
  c.tile = std::nullopt, c.kernel = GemmAmaxKernel::swapped;
  return c;
}

GemmAmaxSetup make_swapped(const GemmAmaxCase& c, std::uint32_t seed, const char* configuration = nullptr) {
  std::mt19937 rng(seed);
  auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  EXPECT_EQ(op.kernel_name(), "swapped") << op.describe();
  if (configuration) {
    EXPECT_NE(op.describe().find(configuration), std::string::npos) << op.describe();
  }
  return s;
}

void expect_pass(GemmAmaxSetup& s, float initial_amax = 0.0f) {
  const auto bad = run_gemm_amax_and_check(s, initial_amax);
  std::string all;
  for (std::size_t i = 0; i < bad.size() && i < 10; ++i) all += "\n  " + bad[i];
  EXPECT_TRUE(bad.empty()) << s.c.describe() << ": " << bad.size() << " mismatches" << all;
}

// Every format of kScaledFormats into f32, bf16 and f16 C: M and N ragged
// (M no multiple of 8, N of the 128-row tile), one or two K blocks, one or
// three batches.
TEST(GemmAmaxSwappedSim, EveryFormatIntoEveryCDtype) {
  std::uint32_t seed = 5000;
  int i = 0;
  for (ScaledFormat f : kScaledFormats)
    for (DType c_dtype : {DType::f32, DType::bf16, DType::f16}) {
      auto s = make_swapped(swapped_case(f, c_dtype, 67 + 2 * i, 40 + 2 * (i % 3) + 1, 64 * (1 + i % 2), i % 2 ? 3 : 1),
                            seed++);
      expect_pass(s);
      ++i;
    }
}

// Two token tiles (M = 300: two of 152) and two row tiles; then one tile
// with K long enough to split over the simulator's SMs: the splits' sums
// meet in the workspace in split order.
TEST(GemmAmaxSwappedSim, TokenTilesAndSplitK) {
  for (ScaledFormat f : {kScaledFormats[0], kScaledFormats[3]}) {
    auto tiles = make_swapped(swapped_case(f, DType::bf16, 300, 136, 256, 1), 5100, "152 tokens x 128 rows");
    expect_pass(tiles);
    auto split = make_swapped(swapped_case(f, DType::f32, 72, 40, 1024, 1), 5101);
    GemmAmax op(*split.a.view, *split.b.view, *split.sfa.view, *split.sfb.view, *split.out.view, *split.amax.view,
                split.options());
    EXPECT_EQ(op.describe().find("K split 1 ways"), std::string::npos) << op.describe();
    expect_pass(split);
  }
}

// amax folds into the caller's value; NaN in A's data makes its row of C and
// amax NaN; an e5m2 infinity makes its row of C inf.
TEST(GemmAmaxSwappedSim, AmaxRules) {
  {
    auto s = make_swapped(swapped_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1), 5200);
    expect_pass(s, 1e6f);
    EXPECT_EQ(s.amax_value(), 1e6f);
  }
  {
    GemmAmaxCase c = swapped_case(kScaledFormats[0], DType::bf16, 40, 24, 64, 2);
    auto s = make_swapped(c, 5201);
    s.a.bytes[static_cast<std::size_t>(5 * s.a.stride_row + 3 + s.a.stride_batch)] = 0x7F;  // e4m3 NaN
    s.upload(s.a);
    expect_pass(s);
    EXPECT_TRUE(std::isnan(s.amax_value()));
    int nans = 0;
    for (float v : s.c_values()) nans += std::isnan(v);
    EXPECT_EQ(nans, c.n);  // row 5 of batch 1
  }
  {
    auto s = make_swapped(swapped_case(kScaledFormats[1], DType::f32, 20, 12, 64, 1), 5202);
    EXPECT_EQ(amax_with_infinity_in_a(s), INFINITY);
  }
}

// NaN in the scale layout's padding (rows past M or N) reaches neither C nor amax.
TEST(GemmAmaxSwappedSim, NaNScalePaddingStaysOutOfC) {
  std::uint32_t seed = 5300;
  for (ScaledFormat f : {kScaledFormats[0], kScaledFormats[2], kScaledFormats[3]}) {
    auto s = make_swapped(swapped_case(f, DType::f32, 130, 72, 128, 1), seed++);
    for (auto [t, rows] : {std::pair{&s.sfa, s.c.m}, std::pair{&s.sfb, s.c.n}}) {
      const ScaleFactorLayout layout{rows, s.c.k, s.c.l, s.c.vec};
      for (std::int64_t o = 0; o < layout.bytes(); ++o)
        if (layout.coordinate(o).padding) t->bytes[static_cast<std::size_t>(o)] = f.sf == DType::e8m0 ? 0xFF : 0x7F;
      s.upload(*t);
    }
    expect_pass(s);
    EXPECT_FALSE(std::isnan(s.amax_value())) << s.c.describe();
  }
}

// With caller_workspace the op allocates nothing: execute() without a
// workspace is refused naming its size; with one (zero-filled, as
// GemmAmax documents: split-K's counters) it runs twice to the same bits.
TEST(GemmAmaxSwappedSim, CallersWorkspace) {
  GemmAmaxCase c = swapped_case(kScaledFormats[3], DType::bf16, 72, 40, 1024, 2);
  auto s = make_swapped(c, 5400);
  GemmAmaxOptions options = s.options();
  options.caller_workspace = true;
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, options);
  const std::size_t bytes = op.workspace_bytes();
  EXPECT_GE(bytes, static_cast<std::size_t>(2 * 72 * 1024 * 2));
  try {
    op.execute(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view);
    ADD_FAILURE() << "ran without a workspace";
  } catch (const OpsError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(bytes) + " bytes"), std::string::npos) << e.what();
  }
  runtime::Buffer workspace(s.a.view->device(), bytes);
  workspace.fill(0);
  const runtime::TensorView ws(workspace, DType::u8, {static_cast<std::int64_t>(bytes)});
  const auto bad = run_gemm_amax_and_check(s, 0.0f, &op, &ws);
  EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad.front());
  const std::vector<float> first = s.c_values();
  const auto again = run_gemm_amax_and_check(s, 0.0f, &op, &ws);
  EXPECT_TRUE(again.empty());
  const std::vector<float> second = s.c_values();
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(0, std::memcmp(first.data(), second.data(), first.size() * sizeof(float)));
}

// What the path refuses, each reason naming the rule.
TEST(GemmAmaxSwappedSim, RefusalsNameTheRule) {
  struct Refused {
    GemmAmaxCase c;
    const char* says;
  };
  GemmAmaxCase ragged_k = swapped_case(kScaledFormats[0], DType::f32, 40, 24, 96, 1);
  GemmAmaxCase fp8_c = swapped_case(kScaledFormats[2], DType::e4m3, 40, 24, 64, 1);
  GemmAmaxCase tiled = swapped_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1);
  tiled.tile = GemmAmaxTile{128, 256};
  GemmAmaxCase a_m_major = swapped_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1);
  a_m_major.a_k_major = false;
  for (const Refused& r : {Refused{ragged_k, "K 96: the swapped kernel takes K a multiple of 64"},
                           Refused{fp8_c, "writes f32, bf16 or f16 C"}, Refused{tiled, "output tile is T x 128"},
                           Refused{a_m_major, "A is not K-major"}}) {
    std::mt19937 rng(5500);
    auto s = make_gemm_amax(runtime::Device::sim(), r.c, rng);
    GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
    std::string all;
    for (const auto& why : op.check_support()) all += why + "\n";
    EXPECT_NE(all.find(r.says), std::string::npos) << r.c.describe() << ":\n" << all;
  }
}

}  // namespace
}  // namespace warpforge::ops::testing
