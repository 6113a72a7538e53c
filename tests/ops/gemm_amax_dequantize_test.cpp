// The pre-pass kernel of GemmAmax (dequantize_kernel.hpp) as PTX: it lets
// the stream's next grid start early only where its path asks for it, and
// then fits beside that grid's CTAs.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "../../src/ops/gemm_amax/dequantize_kernel.hpp"
#include "driver_ptxas.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

// The swapped kernel's loader streams B before it waits for the pre-pass,
// so it may start as the pre-pass does; the prepass path's persistent bf16
// GEMM would hold the SMs the pre-pass still needs, so it starts as the
// pre-pass's CTAs exit (no trigger in the kernel).
TEST(GemmAmaxDequantize, StartsItsDependentsEarlyOnlyWhereAsked) {
  GemmAmaxProblem p;
  p.m = 64, p.n = 128, p.k = 256, p.l = 1;
  p.ab_dtype = DType::e4m3, p.sf_dtype = DType::e8m0, p.c_dtype = DType::bf16, p.vec = 32;
  p.a = {256, 1, 64 * 256}, p.b = {256, 1, 128 * 256}, p.c = {128, 1, 64 * 128};
  const std::string trigger = "griddepcontrol.launch_dependents";
  for (BlockScaledOperand which : {BlockScaledOperand::a, BlockScaledOperand::b}) {
    EXPECT_EQ(build_dequantize_kernel(p, which).to_ptx().find(trigger), std::string::npos);
    EXPECT_EQ(build_dequantize_kernel(p, which, DequantizedOrder::fragments).to_ptx().find(trigger),
              std::string::npos);
    EXPECT_NE(build_dequantize_kernel(p, which, DequantizedOrder::fragments, DependentsStart::at_start)
                  .to_ptx()
                  .find(trigger),
              std::string::npos);
  }
}

// The swapped kernel's pre-pass (A in fragment order, its dependent started
// at once) assembles within kDequantizeBesideRegisters without spills: one
// of its CTAs fits on an SM beside two of the swapped kernel's.
TEST(GemmAmaxPtxas, SwappedPrepassFitsBesideTwoSwappedCtas) {
  if (!ptx::find_ptxas())
    GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the kernel's PTX is not assembled";
  for (const auto& [ab, sf, vec] : {std::tuple{DType::e2m1, DType::e4m3, 16}, std::tuple{DType::e2m1, DType::e8m0, 32},
                                    std::tuple{DType::e4m3, DType::e8m0, 32}}) {
    GemmAmaxProblem p;
    p.m = 16, p.n = 1024, p.k = 1024, p.l = 1;
    p.ab_dtype = ab, p.sf_dtype = sf, p.c_dtype = DType::bf16, p.vec = vec;
    p.a = {1024, 1, 16 * 1024}, p.b = {1024, 1, 1024 * 1024}, p.c = {1024, 1, 16 * 1024};
    const std::string ptx =
        build_dequantize_kernel(p, BlockScaledOperand::a, DequantizedOrder::fragments, DependentsStart::at_start)
            .to_ptx();
    EXPECT_NE(ptx.find(".maxnreg " + std::to_string(kDequantizeBesideRegisters)), std::string::npos) << ptx;
    testing::expect_fast_assembly(ptx, p.describe());
  }
}

}  // namespace
}  // namespace warpforge::ops
