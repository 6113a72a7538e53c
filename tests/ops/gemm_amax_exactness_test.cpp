// Every exact kernel of the GemmAmax family on inputs whose C cancels
// (make_cancelling: one large product per scale block beside small ones of
// one sign, the second half of K negating the first but for a residue,
// scales 2^±20 apart), against the double reference with the bound of f32
// accumulation of exact products. The same cases run on a GPU in
// tests/gpu/gemm_amax_exactness_gpu_test.cpp, where Hopper's FP8 wgmma
// (precision fast) fails them.
#include <gtest/gtest.h>

#include "gemm_amax_test_support.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

struct Kernel {
  GemmAmaxKernel kernel;
  std::optional<GemmAmaxTile> tile;
  const char* name;
};

void expect_exact(const Kernel& k, DType ab, DType sf, int vec, std::int64_t m, std::int64_t n, std::int64_t kk,
                  std::uint32_t seed) {
  GemmAmaxCase c;
  c.ab = ab, c.sf = sf, c.vec = vec, c.c = DType::f32, c.m = m, c.n = n, c.k = kk, c.l = 2;
  c.tile = k.tile, c.kernel = k.kernel;
  std::mt19937 rng(seed);
  auto s = make_gemm_amax(runtime::Device::sim(), c, rng);
  make_cancelling(s, rng);
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  ASSERT_EQ(op.kernel_name(), k.name) << c.describe();
  const auto bad = run_gemm_amax_and_check_exact(s, &op);
  std::string all;
  for (const auto& why : bad) all += "\n  " + why;
  EXPECT_TRUE(bad.empty()) << k.name << " " << c.describe() << ":" << all;
}

using Format = ScaledFormat;
// MXFP8 e4m3 and e5m2, MXFP4, NVFP4.
const ScaledFormat kFormats[] = {kScaledFormats[0], kScaledFormats[1], kScaledFormats[2], kScaledFormats[3]};

TEST(GemmAmaxExactness, SkinnyKernel) {
  std::uint32_t seed = 2000;
  for (Format f : kFormats)
    expect_exact({GemmAmaxKernel::skinny, std::nullopt, "skinny"}, f.ab, f.sf, f.vec, 7, 40, 256, seed++);
}

TEST(GemmAmaxExactness, Sm90aConvertingWarpgroups) {
  std::uint32_t seed = 2100;
  for (Format f : kFormats)
    expect_exact({GemmAmaxKernel::sm90a, GemmAmaxTile{128, 256}, "sm90a"}, f.ab, f.sf, f.vec, 72, 48, 208, seed++);
}

TEST(GemmAmaxExactness, Sm90aDequantizerWarpgroups) {
  std::uint32_t seed = 2200;
  for (Format f : {kFormats[2], kFormats[3]})
    expect_exact({GemmAmaxKernel::sm90a, GemmAmaxTile{128, 128}, "sm90a"}, f.ab, f.sf, f.vec, 72, 48, 192, seed++);
}

TEST(GemmAmaxExactness, PrepassPath) {
  std::uint32_t seed = 2400;
  for (Format f : kFormats)
    expect_exact({GemmAmaxKernel::prepass, std::nullopt, "prepass"}, f.ab, f.sf, f.vec, 72, 48, 208, seed++);
}

TEST(GemmAmaxExactness, SwappedKernel) {
  std::uint32_t seed = 2500;
  for (Format f : kFormats)
    expect_exact({GemmAmaxKernel::swapped, std::nullopt, "swapped"}, f.ab, f.sf, f.vec, 72, 48, 256, seed++);
}

// Decode's tiling (16 tokens: stages of several K blocks, only a stage's
// last block testing for a successor), four stages and more of a split.
TEST(GemmAmaxExactness, SwappedKernelAtDecode) {
  std::uint32_t seed = 2550;
  for (Format f : {kFormats[0], kFormats[3]})
    expect_exact({GemmAmaxKernel::swapped, std::nullopt, "swapped"}, f.ab, f.sf, f.vec, 16, 48, 1024, seed++);
}

TEST(GemmAmaxExactness, Sm80Kernel) {
  std::uint32_t seed = 2300;
  for (Format f : kFormats)
    expect_exact({GemmAmaxKernel::sm80, GemmAmaxTile{32, 32}, "sm80"}, f.ab, f.sf, f.vec, 40, 36, 160, seed++);
}

}  // namespace
}  // namespace warpforge::ops::testing
