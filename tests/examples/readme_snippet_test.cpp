// The DSL example of README.md, kept compiling and assembling.
#include <gtest/gtest.h>

#include "warpforge/dsl.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge {
namespace {

using namespace dsl;

TEST(Readme, DslSnippetBuildsAndAssembles) {
  Kernel k("scale", Target::sm_80);
  Reg x = k.param_ptr("x", 4);
  Reg n = k.param(u32, "n");
  Reg i = k.sreg(SReg::tid_x);
  k.if_then(i < n, [&] {
    Reg off = k.reg(u64);
    k.mul_wide(off, i, 4);
    Reg p = x + off;
    Reg v = k.reg(f32);
    k.ld(Space::global, f32, v, at(p));
    k.mul(v, v, imm_f32(2.0f), {Round::rn});
    k.st(Space::global, f32, at(p), v);
  });
  std::string text = k.ptx();
  EXPECT_NE(text.find("setp.lt.u32 %p0, %r1, %r0;"), std::string::npos) << text;
  EXPECT_NE(text.find("@!%p0 bra $endif_0;"), std::string::npos) << text;
  EXPECT_NE(text.find("mul.rn.f32 %f0, %f0, 0f40000000;"), std::string::npos) << text;
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found; the text was checked, not assembled";
  auto result = ptx::run_ptxas(text, "sm_80");
  EXPECT_TRUE(result.ok) << result.log << text;
}

}  // namespace
}  // namespace warpforge
