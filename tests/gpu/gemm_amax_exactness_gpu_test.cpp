// GemmAmax's kernels on a GPU against inputs whose C cancels
// (tests/ops/gemm_amax_test_support.hpp, make_cancelling), checked against
// the double reference with the bound of f32 accumulation of exact
// products: every exact kernel passes, on small and ragged shapes, and the
// FP8 wgmma scheme (precision fast), which adds each 32-code block's
// products at about 14 bits on Hopper, fails, as it must. The simulator
// runs the exact kernels' cases in tests/ops/gemm_amax_exactness_test.cpp.
#include <gtest/gtest.h>

#include "../ops/gemm_amax_test_support.hpp"
#include "gpu_fixture.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

using ops::GemmAmaxKernel;
using ops::GemmAmaxPrecision;
using ops::GemmAmaxTile;
using ops::testing::GemmAmaxCase;

class GemmAmaxExactnessGpu : public GpuTest {};

using Format = ops::testing::ScaledFormat;
// MXFP8 e4m3 and e5m2, MXFP4, NVFP4.
const Format kFormats[] = {ops::testing::kScaledFormats[0], ops::testing::kScaledFormats[1],
                           ops::testing::kScaledFormats[2], ops::testing::kScaledFormats[3]};

// The case's mismatches (after asserting the kernel GemmAmax chose, and
// what describe() says of its configuration where given).
std::vector<std::string> run_cancelling(const GemmAmaxCase& c, const char* kernel, std::uint32_t seed,
                                        const char* configuration = nullptr) {
  std::mt19937 rng(seed);
  auto s = ops::testing::make_gemm_amax(Device::cuda(0), c, rng);
  ops::testing::make_cancelling(s, rng);
  ops::GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  EXPECT_EQ(op.kernel_name(), kernel) << c.describe() << "\n" << op.describe();
  if (configuration) EXPECT_NE(op.describe().find(configuration), std::string::npos) << op.describe();
  return ops::testing::run_gemm_amax_and_check_exact(s, &op);
}

GemmAmaxCase make_case(Format f, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t l) {
  GemmAmaxCase c;
  c.ab = f.ab, c.sf = f.sf, c.vec = f.vec, c.c = DType::f32, c.m = m, c.n = n, c.k = k, c.l = l;
  c.tile = std::nullopt;
  return c;
}

void expect_exact(const GemmAmaxCase& c, const char* kernel, std::uint32_t seed, const char* configuration = nullptr) {
  const auto bad = run_cancelling(c, kernel, seed, configuration);
  std::string all;
  for (const auto& why : bad) all += "\n  " + why;
  EXPECT_TRUE(bad.empty()) << kernel << " " << c.describe() << ":" << all;
}

TEST_F(GemmAmaxExactnessGpu, SkinnyKernel) {
  std::uint32_t seed = 3000;
  for (Format f : kFormats)
    for (std::int64_t m : {1, 16, 57}) {
      GemmAmaxCase c = make_case(f, m, 1000, 1024, 2);
      c.kernel = GemmAmaxKernel::skinny;  // automatic takes it up to M = 16
      expect_exact(c, "skinny", seed++);
    }
}

// GemmAmax's decode on the grouped GEMM's stream kernel: M 1 and 40 (token
// tiles 8 and 64), N past a 16-row tile, K past a chunk, every format; and
// the decode K, 8192, at M 16 and N 2048 (16 units: K split).
TEST_F(GemmAmaxExactnessGpu, StreamKernel) {
  if (Device::cuda(0).target() != ptx::Target::sm_90a) GTEST_SKIP() << "the stream kernel needs sm_90a";
  std::uint32_t seed = 3700;
  for (Format f : kFormats)
    for (std::int64_t m : {1, 40}) {
      GemmAmaxCase c = make_case(f, m, 1000, 1088, 1);
      c.kernel = GemmAmaxKernel::stream;
      expect_exact(c, "stream", seed++);
    }
  GemmAmaxCase c = make_case(kFormats[3], 16, 2048, 8192, 1);
  c.kernel = GemmAmaxKernel::stream;
  expect_exact(c, "stream", seed++);
}

// The failing shapes (M 1000 x N 1040 x K 2048, L 2, e4m3; 520 x
// 264 x 4128 e5m2) and every format, by default: on sm_90a the swapped
// kernel, or the converting warpgroups (128 x 256) where K is no multiple
// of 64; the first shape also on the converting warpgroups, named.
TEST_F(GemmAmaxExactnessGpu, DefaultKernels) {
  const bool hopper = Device::cuda(0).target() == ptx::Target::sm_90a;
  expect_exact(make_case(kFormats[0], 1000, 1040, 2048, 2), hopper ? "swapped" : "sm80", 3100);
  expect_exact(make_case(kFormats[1], 520, 264, 4128, 1), hopper ? "sm90a" : "sm80", 3101);
  if (hopper) {
    GemmAmaxCase c = make_case(kFormats[0], 1000, 1040, 2048, 2);
    c.kernel = GemmAmaxKernel::sm90a;
    expect_exact(c, "sm90a", 3106);
  }
  std::uint32_t seed = 3102;
  for (Format f : kFormats) expect_exact(make_case(f, 300, 520, 1024, 2), hopper ? "swapped" : "sm80", seed++);
}

TEST_F(GemmAmaxExactnessGpu, Sm90aDequantizerAndSm80Kernels) {
  std::uint32_t seed = 3200;
  if (Device::cuda(0).target() == ptx::Target::sm_90a)
    for (Format f : {kFormats[2], kFormats[3]}) {
      GemmAmaxCase c = make_case(f, 260, 200, 1024, 2);
      c.tile = GemmAmaxTile{128, 128}, c.kernel = GemmAmaxKernel::sm90a;
      expect_exact(c, "sm90a", seed++);
    }
  for (Format f : kFormats) {
    GemmAmaxCase c = make_case(f, 130, 100, 544, 1);
    c.tile = GemmAmaxTile{64, 64};
    expect_exact(c, "sm80", seed++);
  }
}

// The prepass path (bf16 copies, then the bf16 GEMM with amax), every
// format, ragged shapes, the large-M default (M x L >= 2048) and a named one.
TEST_F(GemmAmaxExactnessGpu, PrepassPath) {
  if (Device::cuda(0).target() != ptx::Target::sm_90a) GTEST_SKIP() << "its bf16 GEMM needs sm_90a";
  std::uint32_t seed = 3400;
  expect_exact(make_case(kFormats[0], 2048, 1040, 2048, 2), "prepass", seed++);
  for (Format f : kFormats) {
    GemmAmaxCase c = make_case(f, 300, 520, 1056, 2);
    c.kernel = GemmAmaxKernel::prepass;
    expect_exact(c, "prepass", seed++);
  }
}

// The swapped kernel (B's codes into wgmma's register fragments, A by a
// pre-pass), every format: ragged M and N, several token tiles, split K;
// up to 64 tokens stages of several K blocks, K (1088: 17 blocks) no
// multiple of a stage's.
TEST_F(GemmAmaxExactnessGpu, SwappedKernel) {
  if (Device::cuda(0).target() != ptx::Target::sm_90a) GTEST_SKIP() << "wgmma needs sm_90a";
  std::uint32_t seed = 3500;
  for (Format f : kFormats)
    for (std::int64_t m : {40, 72, 300}) {
      GemmAmaxCase c = make_case(f, m, 520, m == 40 ? 1088 : 2048, 2);
      c.kernel = GemmAmaxKernel::swapped;
      expect_exact(c, "swapped", seed++);
    }
}

// Split K both ways in the swapped kernel (up to 2 splits as a cluster
// adding its sums in shared memory, more through the workspace), and the
// skinny kernel's splits (through the workspace).
TEST_F(GemmAmaxExactnessGpu, SplitsAddUpEitherWay) {
  if (Device::cuda(0).target() != ptx::Target::sm_90a) GTEST_SKIP() << "wgmma needs sm_90a";
  struct Split {
    GemmAmaxKernel kernel;
    const char* name;
    std::int64_t m, n, k, l;
    const char* says;
  };
  const GemmAmaxKernel swapped = GemmAmaxKernel::swapped, skinny = GemmAmaxKernel::skinny;
  std::uint32_t seed = 3600;
  for (Format f : {kFormats[0], kFormats[3]})
    for (const Split& s : {Split{swapped, "swapped", 72, 8200, 1024, 1, "K split 2 ways (a cluster"},
                           Split{swapped, "swapped", 72, 520, 2048, 2, "K split 4 ways (their sums added through"},
                           Split{swapped, "swapped", 72, 520, 8192, 1, "K split 16 ways (their sums added through"},
                           Split{swapped, "swapped", 16, 520, 8192, 1, "K split 16 ways (their sums added through"},
                           Split{swapped, "swapped", 40, 8200, 1088, 1, "K split 2 ways (a cluster"},
                           Split{skinny, "skinny", 16, 8192, 4096, 1, "K split 4 ways (their sums added through"},
                           Split{skinny, "skinny", 16, 1000, 8192, 1, "K split 8 ways (their sums added through"}}) {
      GemmAmaxCase c = make_case(f, s.m, s.n, s.k, s.l);
      c.kernel = s.kernel;
      expect_exact(c, s.name, seed++, s.says);
    }
}

// Decode's default where the grid fills two CTAs an SM (35 row tiles x 4
// K splits through the workspace: 140 CTAs on 132 SMs): MXFP8 at 16
// tokens, NVFP4 at 40 (2 K blocks a stage in half the shared memory).
TEST_F(GemmAmaxExactnessGpu, TwoCtasAnSm) {
  if (Device::cuda(0).target() != ptx::Target::sm_90a) GTEST_SKIP() << "wgmma needs sm_90a";
  std::uint32_t seed = 3700;
  for (const auto& [f, m] : {std::pair{kFormats[0], std::int64_t{16}}, std::pair{kFormats[3], std::int64_t{40}}}) {
    GemmAmaxCase c = make_case(f, m, 4400, 4096, 1);
    c.kernel = GemmAmaxKernel::swapped;
    expect_exact(c, "swapped", seed++, "2 CTAs an SM");
  }
}

// FP8 wgmma on the codes (precision fast) adds a block's 32 products
// aligned to the largest at about 14 bits: the small products, whose sum is
// what C cancels down to, are lost. On an H100 that must show.
TEST_F(GemmAmaxExactnessGpu, Fp8WgmmaOfPrecisionFastFails) {
  if (Device::cuda(0).target() != ptx::Target::sm_90a) GTEST_SKIP() << "FP8 wgmma needs sm_90a";
  for (Format f : {kFormats[0], kFormats[1]}) {
    GemmAmaxCase c = make_case(f, 1000, 1040, 128, 1);
    c.precision = GemmAmaxPrecision::fast, c.kernel = GemmAmaxKernel::sm90a;
    EXPECT_FALSE(run_cancelling(c, "sm90a", 3300).empty())
        << c.describe() << ": FP8 wgmma passed the f32 bound; it was measured inexact on an H100";
  }
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
