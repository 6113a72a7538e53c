// Kernel::scope: a `{ ... }` block whose named registers, predicates and
// labels are local to it, as PTX scopes them, and the refusals for handles
// used where their register is not the one the name means.
#include <gtest/gtest.h>

#include <fstream>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"
#include "warpforge/ptx/verifier.hpp"

namespace warpforge::dsl {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DslError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Scope, DeclaresNamedRegistersInsideTheBlockAndMayHideOuterNames) {
  Kernel k("scoped", Target::sm_80);
  Reg outer = k.reg(u32, "tmp");
  Pred p = k.pred();  // automatic: function-wide
  k.mov(outer, 1);
  for (int i = 0; i < 2; ++i)
    k.scope([&] {
      Reg tmp = k.reg(u32, "tmp");  // hides the function's %tmp; the second scope reuses the name
      Pred done = k.declare_pred("%p0");  // hides the automatic %p0
      Label again = k.label_named("waitLoop");
      k.place(again);
      k.add(tmp, tmp, 1);
      k.setp(done, Cmp::lt, tmp, 4);
      k.bra_if(done, again);
    });
  k.setp(p, Cmp::eq, outer, 1);
  const std::string ptx = k.ptx();
  EXPECT_EQ(ptx::verify(k.module()), std::vector<std::string>{}) << ptx;
  const std::string block =
      "\t{\n\t\t.reg .b32 %tmp;\n\t\t.reg .pred %p0;\nwaitLoop:\n\t\tadd.u32 %tmp, %tmp, 1;\n"
      "\t\tsetp.lt.u32 %p0, %tmp, 4;\n\t\t@%p0 bra waitLoop;\n\t}\n";
  EXPECT_NE(ptx.find(block + block + "\tsetp.eq.u32 %p0, %tmp, 1;"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("\t.reg .b32 %tmp;\n"), std::string::npos)
      << ptx;  // the function's, at the top

  auto ptxas = ptx::find_cuda_tool("ptxas");
  if (!ptxas)
    GTEST_SKIP()
        << "ptxas not found on PATH or in /usr/local/cuda/bin: the assembly check needs it";
  const std::string path = ::testing::TempDir() + "warpforge_scope_test.ptx";
  std::ofstream(path) << ptx;
  ptx::ToolRun run = ptx::run_tool(*ptxas, {"-arch=sm_80", path, "-o", path + ".cubin"});
  EXPECT_EQ(run.exit_code, 0) << run.output << ptx;
}

TEST(Scope, NamesEndWithTheirScope) {
  Kernel k("reuse", Target::sm_80);
  k.scope([&] { k.reg(u32, "t"); });
  Reg t = k.reg(u32, "t");  // free again at the function level
  k.mov(t, 2);
  EXPECT_NE(k.ptx().find("mov.u32 %t, 2;"), std::string::npos);
}

TEST(Scope, RefusesHandlesWhereTheirNameMeansAnotherRegister) {
  {
    Kernel k("after", Target::sm_80);
    Reg inner;
    k.scope([&] { inner = k.reg(u32, "x"); });
    EXPECT_EQ(message_of([&] { k.mov(inner, 1); }),
              "kernel 'after': register: register %x is used outside the scope that declared it");
  }
  {
    Kernel k("hidden", Target::sm_80);
    Pred outer = k.declare_pred("%p1");
    std::string message;
    k.scope([&] {
      k.declare_pred("%p1");
      message = message_of([&] { k.bra_if(outer, k.label_named("L")); });
    });
    EXPECT_NE(
        message.find(
            "predicate %p1 is hidden here by another declaration of %p1 in an enclosing scope"),
        std::string::npos)
        << message;
  }
  {
    Kernel k("twice", Target::sm_80);
    EXPECT_EQ(message_of([&] {
                k.scope([&] {
                  k.reg(u32, "x");
                  k.declare_reg(b32, "%x");
                });
              }),
              "kernel 'twice': .reg: register name '%x' is already declared in this scope");
    Label l = k.label_named("L");
    EXPECT_EQ(message_of([&] {
                k.scope([&] {
                  k.place(l);
                  k.place(l);
                });
              }),
              "kernel 'twice': L:: label placed twice in one scope");
  }
}

TEST(Scope, AFailedScopeLeavesTheKernelAsBefore) {
  Kernel k("rollback", Target::sm_80);
  Reg r = k.reg(u32, "v");
  EXPECT_THROW(k.scope([&] {
    k.reg(u32, "v");
    k.reg(u32, "v");
  }),
               DslError);
  k.mov(r, 3);  // the function's %v is visible again
  EXPECT_NE(k.ptx().find("mov.u32 %v, 3;"), std::string::npos);
}

}  // namespace
}  // namespace warpforge::dsl
