// The pre-pass kernel of GemmAmax (dequantize_kernel.hpp) as PTX: it lets
// the stream's next grid start early only where its path asks for it.
#include <gtest/gtest.h>

#include <string>

#include "../../src/ops/gemm_amax/dequantize_kernel.hpp"

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

}  // namespace
}  // namespace warpforge::ops
