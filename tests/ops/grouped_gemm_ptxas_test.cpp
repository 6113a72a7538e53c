// The grouped GEMM's kernels assemble with ptxas as the driver compiles
// them, without spills: the sm80 kernel for sm_80 and sm_90a in both forms
// and every operand major-ness; the sm90a design at both tile widths; the
// stream kernel for sm_90a in every format, token tile, with and without
// split K and amax. Skips, saying
// so, without the CUDA toolkit.
#include <gtest/gtest.h>

#include "../../src/ops/grouped_gemm/sm80_grouped_kernel.hpp"
#include "../../src/ops/grouped_gemm/sm90a_grouped_kernel.hpp"
#include "../../src/ops/grouped_gemm/stream_grouped_kernel.hpp"
#include "driver_ptxas.hpp"
#include "warpforge/ptx/ptxas.hpp"

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
        const auto r = ptx::run_ptxas(text, arch, {"-v"});
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

TEST(GroupedGemmPtxas, StreamKernelAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  struct Case {
    DType data, scale;
    int vec, tokens, splits;
    bool amax;
  };
  for (const Case& c : {Case{DType::e2m1, DType::e8m0, 32, 8, 1, false}, Case{DType::e2m1, DType::e4m3, 16, 16, 3, false},
                        Case{DType::e4m3, DType::e8m0, 32, 32, 2, true}, Case{DType::e5m2, DType::e8m0, 32, 64, 1, false},
                        Case{DType::e2m1, DType::e8m0, 32, 64, 1, true}}) {
    GroupedGemmProblem p;
    p.m = 512, p.n = 2880, p.k = 2880, p.groups = 128;
    p.b_dtype = c.data, p.sf_dtype = c.scale, p.vec = c.vec, p.packed_b = true, p.amax = c.amax;
    p.a = {true, 2880, 0}, p.d = {true, 2880, 0};
    StreamGroupedTiling t;
    t.row_tiles = c.data == DType::e2m1 ? 2 : 1;
    t.tokens = c.tokens, t.splits = c.splits, t.stages = c.tokens >= 32 ? 3 : 4, t.a_ld = 2880;
    testing::expect_fast_assembly(build_stream_grouped(p, t).to_ptx(), p.describe() + ", " + t.describe());
  }
}

}  // namespace
}  // namespace warpforge::ops
