// The grouped GEMM's kernels assemble with ptxas as the driver compiles
// them, without spills: the sm80 kernel for sm_80 and sm_90a in both forms
// and every operand major-ness; the sm90a design at both tile widths; the
// RS design of packed weights at 256 and 64 tokens a tile; the
// stream kernel for sm_90a in every format, token tile, with and without
// split K and amax, its registers inside the CTAs an
// SM it asks for. Skips, saying so, without the CUDA toolkit.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <tuple>

#include "../../src/ops/grouped_gemm/sm80_grouped_kernel.hpp"
#include "../../src/ops/grouped_gemm/sm90a_grouped_kernel.hpp"
#include "../../src/ops/grouped_gemm/sm90a_grouped_rs.hpp"
#include "../../src/ops/grouped_gemm/stream_grouped_kernel.hpp"
#include "driver_ptxas.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

TEST(GroupedGemmPtxas, Sm80KernelAssemblesForSm80AndSm90a) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  for (int form = 0; form < 3; ++form) {
    GroupedGemmProblem p;
    p.m = 300, p.n = 200, p.k = 264, p.groups = 8;
    p.d_dtype = form == 1 ? DType::f32 : DType::bf16;
    if (form < 2) {  // ragged M, B n-major then k-major
      p.a = {true, 264, 0};
      p.b = form == 0 ? GroupedOperand{true, 200, 264 * 200} : GroupedOperand{false, 264, 264 * 200};
      p.d = {true, 200, 0};
    } else {  // ragged K: A m-major, B n-major
      p.form = GroupedForm::ragged_k;
      p.a = {false, 300, 0}, p.b = {true, 200, 0}, p.d = {true, 200, 300 * 200};
    }
    for (GroupedSm80Config c : {GroupedSm80Config{}, GroupedSm80Config{.tile_m = 64, .warps_m = 1}}) {
      const std::string text = build_sm80_grouped(p, c).to_ptx();
      for (const char* arch : {"sm_80", "sm_90a"}) {
        const auto r = testing::recorded_ptxas(text, arch, {"-v"});
        EXPECT_TRUE(r.ok) << p.describe() << " " << c.describe() << " on " << arch << ":\n" << r.log;
        EXPECT_NE(r.log.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos)
            << p.describe() << " " << c.describe() << ":\n" << r.log;
      }
    }
  }
}

// The forward (B K-major), dA = dD·Bᵀ (B N-major) and dB (ragged K: A
// M-major, B N-major) at gpt-oss's shape.
TEST(GroupedGemmPtxas, Sm90aDesignAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  for (int form = 0; form < 3; ++form) {
    GroupedGemmProblem p;
    p.m = 4096, p.n = 5760, p.k = 2880, p.groups = 128;
    p.a = {true, 2880, 0}, p.b = {false, 2880, 2880 * 5760}, p.d = {true, 5760, 0};
    if (form == 1) p.n = 2880, p.k = 5760, p.b = {true, 2880, 2880 * 5760}, p.d = {true, 2880, 0};
    if (form == 2) {
      p.form = GroupedForm::ragged_k;
      p.m = 5760, p.n = 2880, p.k = 4096;
      p.a = {false, 5760, 0}, p.b = {true, 2880, 0}, p.d = {true, 2880, 5760 * 2880};
    }
    for (DType d : {DType::bf16, DType::f32})
      for (GroupedSm90aConfig c : {GroupedSm90aConfig{128, 6}, GroupedSm90aConfig{256, 4}}) {
        p.d_dtype = d;
        while (sm90a_grouped_shared_bytes(p, c) > 227 * 1024) --c.stages;  // f32 D's staging takes more
        testing::expect_fast_assembly(build_sm90a_grouped(p, c).to_ptx(), p.describe() + ", " + c.describe());
      }
  }
}

// Weight-only at gpt-oss's shape on the RS design: MXFP4, NVFP4 and MXFP8
// at 256 tokens a tile (128 accumulators a thread: the consumers' 232
// registers), MXFP4 at 64, MXFP4 at 128 with K split (the sums' copy
// beside the accumulators); at 128 tokens its three consumer warpgroups
// (152 registers), MXFP4, NVFP4 and MXFP8.
TEST(GroupedGemmPtxas, Sm90aWeightOnlyAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  GroupedGemmProblem p;
  p.m = 4096, p.n = 5760, p.k = 2880, p.groups = 128;
  p.packed_b = true;
  p.a = {true, 2880, 0}, p.d = {true, 5760, 0};
  for (auto [data, scale, vec, tokens, splits, consumers] :
       {std::tuple{DType::e2m1, DType::e8m0, 32, 256, 1, 2}, std::tuple{DType::e2m1, DType::e4m3, 16, 256, 1, 2},
        std::tuple{DType::e2m1, DType::e8m0, 32, 64, 1, 2}, std::tuple{DType::e4m3, DType::e8m0, 32, 256, 1, 2},
        std::tuple{DType::e2m1, DType::e8m0, 32, 128, 2, 2}, std::tuple{DType::e2m1, DType::e8m0, 32, 128, 1, 3},
        std::tuple{DType::e2m1, DType::e4m3, 16, 128, 1, 3},
        std::tuple{DType::e4m3, DType::e8m0, 32, 128, 1, 3}}) {
    p.b_dtype = data, p.sf_dtype = scale, p.vec = vec;
    GroupedRsConfig rs{tokens, 8, splits, consumers};
    while (sm90a_grouped_rs_shared_bytes(p, rs) > 227 * 1024) --rs.stages;
    testing::expect_fast_assembly(build_sm90a_grouped_rs(p, rs).to_ptx(), p.describe() + ", " + rs.describe());
  }
}

// And its registers fit the CTAs an SM its tiling counts on
// (.minnctapersm): the defaults' 2 stages up to 16 tokens (16 warps an SM:
// 4 CTAs of 4, or of packed weights at 16 tokens 2 of 8; at most 128
// registers), 3 stages beyond.
TEST(GroupedGemmPtxas, StreamKernelAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  struct Case {
    DType data, scale;
    int vec, tokens, splits, stages;
    bool amax;
    int warps = 4;
  };
  for (const Case& c : {Case{DType::e2m1, DType::e8m0, 32, 8, 1, 2, false}, Case{DType::e2m1, DType::e4m3, 16, 8, 3, 2, false},
                        Case{DType::e2m1, DType::e4m3, 16, 16, 3, 2, true}, Case{DType::e4m3, DType::e8m0, 32, 8, 2, 2, false},
                        Case{DType::e4m3, DType::e8m0, 32, 32, 2, 3, true}, Case{DType::e5m2, DType::e8m0, 32, 64, 1, 3, false},
                        Case{DType::e2m1, DType::e8m0, 32, 64, 1, 3, true},
                        Case{DType::e2m1, DType::e8m0, 32, 16, 2, 2, false, 8},
                        Case{DType::e4m3, DType::e8m0, 32, 16, 1, 2, true, 8}}) {
    GroupedGemmProblem p;
    p.m = 512, p.n = 2880, p.k = 2880, p.groups = 128;
    p.b_dtype = c.data, p.sf_dtype = c.scale, p.vec = c.vec, p.packed_b = true, p.amax = c.amax;
    p.a = {true, 2880, 0}, p.d = {true, 2880, 0};
    StreamGroupedTiling t;
    t.row_tiles = c.data == DType::e2m1 ? 2 : 1;
    t.tokens = c.tokens, t.splits = c.splits, t.stages = c.stages, t.a_ld = 2880, t.warps = c.warps;
    const std::string what = p.describe() + ", " + t.describe();
    const std::string text = build_stream_grouped(p, t).to_ptx();
    testing::expect_fast_assembly(text, what);
    const ptx::PtxasResult r = testing::assemble_as_driver(text);
    const std::size_t at = r.log.find("Used ");
    ASSERT_NE(at, std::string::npos) << what << ":\n" << r.log;
    const int registers = std::stoi(r.log.substr(at + 5));
    const std::int64_t ctas = stream_grouped_ctas_per_sm(p, t);
    EXPECT_LE(registers * t.threads() * ctas, 65536) << what << ": " << ctas << " CTAs an SM\n" << r.log;
    if (c.tokens <= 16) EXPECT_EQ(ctas * c.warps, 16) << what;
    std::printf("  %s: %d registers, %lld CTAs an SM\n", what.c_str(), registers, static_cast<long long>(ctas));
  }
}

}  // namespace
}  // namespace warpforge::ops
