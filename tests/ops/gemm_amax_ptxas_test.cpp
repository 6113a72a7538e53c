// The GemmAmax kernels' PTX assembles with ptxas: the sm80 kernel for sm_80
// (its target) and sm_90a, for each C conversion and tile shape; the sm90a
// and skinny kernels for sm_90a without spills. Skips, saying so, without the CUDA toolkit.
#include <gtest/gtest.h>

#include "../../src/ops/gemm_amax/skinny_gemm_amax_kernel.hpp"
#include "../../src/ops/gemm_amax/swapped_gemm_amax_kernel.hpp"
#include "../../src/ops/gemm_amax/sm80_gemm_amax_kernel.hpp"
#include "../../src/ops/gemm_amax/sm90a_gemm_amax_kernel.hpp"
#include "driver_ptxas.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

TEST(GemmAmaxPtxas, KernelAssemblesForSm80AndSm90a) {
  if (!ptx::find_ptxas())
    GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  struct Case {
    DType ab, sf, c;
    int vec;
    GemmAmaxTile tile;
  };
  for (const Case& c : {Case{DType::e4m3, DType::e8m0, DType::bf16, 32, {64, 64}},
                        Case{DType::e5m2, DType::e8m0, DType::f32, 32, {128, 128}},
                        Case{DType::e2m1, DType::e4m3, DType::e2m1, 16, {32, 32}},
                        Case{DType::e2m1, DType::e8m0, DType::e5m2, 32, {64, 32}},
                        Case{DType::e2m1, DType::e8m0, DType::f16, 16, {32, 128}}}) {
    GemmAmaxProblem p;
    p.m = 300, p.n = 200, p.k = 256, p.l = 2;
    p.ab_dtype = c.ab, p.sf_dtype = c.sf, p.c_dtype = c.c, p.vec = c.vec;
    p.a = {256, 1, 300 * 256}, p.b = {256, 1, 200 * 256}, p.c = {224, 1, 300 * 224};
    const std::string text = build_sm80_gemm_amax(p, c.tile).to_ptx();
    for (const char* arch : {"sm_80", "sm_90a"}) {
      const auto r = testing::recorded_ptxas(text, arch);
      EXPECT_TRUE(r.ok) << p.describe() << " tile " << c.tile.m << "x" << c.tile.n << " on " << arch
                        << ":\n"
                        << r.log;
    }
  }
}

// The sm90a kernel assembles for sm_90a with no spills (ptxas -v), for each
// data dtype, a scale format of each, and each C conversion: MXFP8 as FP8
// wgmma on the codes (fp8_mma), FP4 through the dequantizer with one or two
// dequantizer warpgroups, at both tile widths and with split-K, compiled as the driver
// compiles it (driver_ptxas.hpp) without serialized wgmma or lost setmaxnreg.
TEST(GemmAmaxPtxas, Sm90aKernelAssemblesWithoutSpills) {
  if (!ptx::find_ptxas())
    GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  struct Case {
    DType ab, sf, c;
    int vec;
  };
  for (const Case& c : {Case{DType::e4m3, DType::e8m0, DType::bf16, 32}, Case{DType::e5m2, DType::e8m0, DType::f32, 32},
                        Case{DType::e2m1, DType::e4m3, DType::f16, 16}}) {
    GemmAmaxProblem p;
    p.m = 300, p.n = 200, p.k = 256, p.l = 2;
    p.ab_dtype = c.ab, p.sf_dtype = c.sf, p.c_dtype = c.c, p.vec = c.vec;
    p.a = {256, 1, 300 * 256}, p.b = {256, 1, 200 * 256}, p.c = {200, 1, 300 * 200};
    std::vector<Sm90aGemmAmaxTiling> tilings;
    if (c.ab == DType::e2m1) {
      // Converting warpgroups at 128 x 256 (alone and in 2-CTA clusters), dequantizer warpgroups at 128 x 128 and 128 x 64.
      tilings.push_back({.tile_n = 256});
      tilings.push_back({.tile_n = 256, .cluster_m = 2});
      for (int tile_n : {128, 64})
        for (int dq : {1, 2}) tilings.push_back({.tile_n = tile_n, .stages = 6, .raw_stages = 6, .dequant_warpgroups = dq});
    } else {
      // FP8 wgmma at 128 x 128 and 128 x 64, converting warpgroups at 128 x 256 (alone and in 2-CTA clusters).
      for (int tile_n : {128, 64}) tilings.push_back({.tile_n = tile_n, .raw_stages = 5, .fp8_mma = true});
      tilings.push_back({.tile_n = 256, .raw_stages = 3});
      tilings.push_back({.tile_n = 256, .raw_stages = 3, .cluster_m = 2});
    }
    // Split-K as the decode shape takes it: 128-wide tiles, K in ranges.
    Sm90aGemmAmaxTiling split = c.ab == DType::e2m1 ? tilings[2] : tilings.front();
    split.splits = 2;
    tilings.push_back(split);
    for (const Sm90aGemmAmaxTiling& t : tilings)
      testing::expect_fast_assembly(build_sm90a_gemm_amax(p, t).to_ptx(), p.describe() + " " + sm90a_gemm_amax_name(p, t));
  }
}

// The skinny kernel assembles for sm_90a without spills for every data
// format, 1 to 64 tokens, one or two row tiles, with and without split-K.
TEST(GemmAmaxPtxas, SkinnyKernelAssemblesWithoutSpills) {
  if (!ptx::find_ptxas())
    GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  struct Case {
    DType ab, sf, c;
    int vec;
    std::int64_t m;
    SkinnyGemmAmaxTiling t;
  };
  // The tilings skinny_gemm_amax_tiling chooses (FP8: two row tiles up to
  // 16 tokens, one above; E2M1: two, one chunk ahead), and deeper prefetch.
  for (const Case& c : {Case{DType::e4m3, DType::e8m0, DType::bf16, 32, 1, {}},
                        Case{DType::e4m3, DType::e8m0, DType::f16, 32, 16, {.splits = 4}},
                        Case{DType::e5m2, DType::e8m0, DType::f32, 32, 64, {.row_tiles = 1, .splits = 4}},
                        Case{DType::e2m1, DType::e4m3, DType::f16, 16, 16, {.splits = 2, .prefetch = 3}},
                        Case{DType::e2m1, DType::e8m0, DType::bf16, 32, 64, {.splits = 4, .prefetch = 1}}}) {
    GemmAmaxProblem p;
    p.m = c.m, p.n = 1000, p.k = 1024, p.l = 2;
    p.ab_dtype = c.ab, p.sf_dtype = c.sf, p.c_dtype = c.c, p.vec = c.vec;
    p.a = {1024, 1, c.m * 1024}, p.b = {1024, 1, 1000 * 1024}, p.c = {1000, 1, c.m * 1000};  // elements (E2M1: nibbles)
    testing::expect_fast_assembly(build_skinny_gemm_amax(p, c.t).to_ptx(), p.describe());
  }
}

// The swapped kernel assembles for sm_90a without spills for every data
// format, 8 to 256 tokens, with and without split-K, in a cluster or
// through the workspace, with one K block a stage or several (decode).
TEST(GemmAmaxPtxas, SwappedKernelAssemblesWithoutSpills) {
  if (!ptx::find_ptxas())
    GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  struct Case {
    DType ab, sf, c;
    int vec;
    std::int64_t m;
    SwappedGemmAmaxTiling t;
  };
  for (const Case& c : {Case{DType::e4m3, DType::e8m0, DType::bf16, 32, 128, {}},
                        Case{DType::e5m2, DType::e8m0, DType::f32, 32, 72, {.tokens = 72, .splits = 2}},
                        Case{DType::e2m1, DType::e4m3, DType::bf16, 16, 128, {.tokens = 128, .splits = 2, .cluster = true}},
                        Case{DType::e4m3, DType::e8m0, DType::bf16, 32, 128, {.tokens = 128, .stages = 8, .splits = 4, .cluster = true}},
                        Case{DType::e2m1, DType::e4m3, DType::f16, 16, 8, {.tokens = 8, .stages = 4, .splits = 4}},
                        Case{DType::e2m1, DType::e4m3, DType::bf16, 16, 16, {.tokens = 16, .stages = 8, .blocks = 4, .splits = 2, .cluster = true}},
                        Case{DType::e4m3, DType::e8m0, DType::bf16, 32, 64, {.tokens = 64, .stages = 6, .blocks = 2, .splits = 2, .cluster = true}},
                        // Two CTAs an SM (decode's default): 104 registers a consumer thread, 64 tokens' too.
                        Case{DType::e2m1, DType::e4m3, DType::bf16, 16, 16, {.tokens = 16, .stages = 4, .blocks = 4, .splits = 4, .ctas_per_sm = 2}},
                        Case{DType::e4m3, DType::e8m0, DType::bf16, 32, 8, {.tokens = 8, .stages = 4, .blocks = 2, .splits = 4, .ctas_per_sm = 2}},
                        Case{DType::e2m1, DType::e8m0, DType::f32, 32, 64, {.tokens = 64, .stages = 4, .blocks = 2, .splits = 4, .ctas_per_sm = 2}},
                        Case{DType::e4m3, DType::e8m0, DType::bf16, 32, 64, {.tokens = 64, .stages = 3, .blocks = 2, .splits = 4, .ctas_per_sm = 2}},
                        Case{DType::e2m1, DType::e8m0, DType::bf16, 32, 256, {.tokens = 256, .stages = 5}},
                        Case{DType::e4m3, DType::e8m0, DType::f32, 32, 1000, {.tokens = 256, .stages = 5, .splits = 2}}}) {
    GemmAmaxProblem p;
    p.m = c.m, p.n = 1000, p.k = 1024, p.l = 2;
    p.ab_dtype = c.ab, p.sf_dtype = c.sf, p.c_dtype = c.c, p.vec = c.vec;
    p.a = {1024, 1, c.m * 1024}, p.b = {1024, 1, 1000 * 1024}, p.c = {1000, 1, c.m * 1000};  // elements (E2M1: nibbles)
    testing::expect_fast_assembly(build_swapped_gemm_amax(p, c.t).to_ptx(), p.describe());
  }
}

}  // namespace
}  // namespace warpforge::ops
