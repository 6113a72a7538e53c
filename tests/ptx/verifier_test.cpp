#include <gtest/gtest.h>

#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/ptx/scopes.hpp"
#include "warpforge/ptx/verifier.hpp"

namespace warpforge::ptx {
namespace {

const std::string kModuleHeader = ".version 8.4\n.target sm_90a\n.address_size 64\n";

// The problems verify() finds in the module of `items` after the header.
std::vector<std::string> problems_in(const std::string& items) {
  return verify(parse(kModuleHeader + items));
}

TEST(Verifier, AcceptsAWellFormedModule) {
  const auto problems = problems_in(
      ".extern .func (.param .b32 r) f(.param .b32 a);\n"
      ".func g(.reg .b32 x) { add.s32 x, x, 1; ret; }\n"
      ".entry k() {\n .reg .pred %p<2>;\n .reg .b32 %r<3>;\n .reg .b32 v;\n"
      " $L0:\n @%p1 bra $L0;\n mov.u32 %r2, %tid.x;\n mov.u32 v, %r2;\n"
      " { .param .b32 a; .param .b32 r; call (r), f, (a); }\n ret;\n}\n");
  EXPECT_EQ(problems, std::vector<std::string>{});
}

TEST(Verifier, ReportsEveryProblem) {
  const auto problems = problems_in(
      ".global .b32 x;\n.global .b32 x;\n"
      ".entry k() {\n .reg .b32 %r<3>;\n"
      " $L0:\n $L0:\n mov.u32 %r3, 1;\n @%p1 bra nowhere;\n call missing;\n ret;\n}\n"
      ".entry k() { ret; }\n");
  EXPECT_EQ(problems,
            (std::vector<std::string>{
                "module variable x is declared twice",
                "function k is defined twice",
                "function k: defines label $L0 twice",
                "function k: uses register %r3 that is not declared",
                "function k: guards with predicate %p1 that is not declared",
                "function k: branches to nowhere, which is not a label here",
                "function k: calls missing, which the module neither defines nor declares",
            }));
}

// PTX scopes registers and labels by block (scopes.hpp): the forms real
// compilers emit are accepted.
TEST(Verifier, AcceptsScopedNamesAsCompilersEmitThem) {
  const auto problems = problems_in(
      ".entry k() {\n .reg .pred %p<3>;\n .reg .b32 %r<3>;\n"
      // nvcc's inline asm: %p1 declared in the block shadows the function's %p1.
      " { .reg .pred %p1; setp.ne.u32 %p1, %r1, 0; @%p1 mov.u32 %r2, 1; }\n"
      // Triton: waitLoop in two sibling blocks.
      " { waitLoop: @%p2 bra waitLoop; }\n { waitLoop: @%p2 bra waitLoop; }\n"
      // wmma kernels: %ftmp<4> in one block, %ftmp<2> in another.
      " { .reg .f32 %ftmp<4>; mov.f32 %ftmp3, 0f00000000; }\n"
      " { .reg .f32 %ftmp<2>; mov.f32 %ftmp1, 0f00000000; { .reg .b32 %r1; mov.u32 %r1, 2; } }\n"
      " mov.u32 %r2, %r1;\n ret;\n}\n");
  EXPECT_EQ(problems, std::vector<std::string>{});
}

TEST(Verifier, ReportsWhatPtxasRefusesInScopes) {
  const auto problems = problems_in(
      ".entry k() {\n .reg .b32 %r<3>;\n"
      " { .reg .b32 %q; .reg .b32 %q; .reg .b32 %r<2>; .reg .b32 %r<4>; }\n"
      " mov.u32 %q, 1;\n"  // %q ended with its block
      " { inner: mov.u32 %r1, 1; }\n @%r1 bra inner;\n"
      " { L: L: ret; }\n ret;\n}\n");
  EXPECT_EQ(problems, (std::vector<std::string>{
                          "function k: declares register %q twice in one block",
                          "function k: declares registers %r<4> twice in one block",
                          "function k: uses register %q that is not declared",
                          "function k: uses label inner, which is defined only in a block that "
                          "does not enclose the use",
                          "function k: defines label L twice",
                      }));
}

TEST(Scopes, GiveEachDeclarationItsOwnName) {
  Module m = parse(kModuleHeader +
                   ".entry k() {\n .reg .pred %p<3>;\n"
                   " { .reg .pred %p1; @%p1 bra done; done: ret; }\n"
                   " { .reg .pred %p<2>; done: @%p0 bra done; }\n @%p1 ret;\n}\n");
  std::vector<std::string> problems;
  const Block body = with_unique_names(*m.entries().at(0), problems);
  EXPECT_EQ(problems, std::vector<std::string>{});
  Function renamed = *m.entries().at(0);
  renamed.body = body;
  EXPECT_EQ(emit(renamed),
            ".entry k()\n{\n"
            "\t.reg .pred %p<3>;\n"
            "\t{\n\t\t.reg .pred %p1$1;\n\t\t@%p1$1 bra done;\ndone:\n\t\tret;\n\t}\n"
            "\t{\n\t\t.reg .pred %p$1_<2>;\ndone$1:\n\t\t@%p$1_0 bra done$1;\n\t}\n"
            "\t@%p1 ret;\n}\n");
}

}  // namespace
}  // namespace warpforge::ptx
