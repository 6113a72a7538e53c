#include <gtest/gtest.h>

#include "warpforge/ptx/parser.hpp"
#include "warpforge/ptx/verifier.hpp"

namespace warpforge::ptx {
namespace {

const std::string kHeader = ".version 8.4\n.target sm_90a\n.address_size 64\n";

TEST(Verifier, AcceptsAWellFormedModule) {
  Module m = parse(kHeader +
                   ".extern .func (.param .b32 r) f(.param .b32 a);\n"
                   ".func g(.reg .b32 x) { add.s32 x, x, 1; ret; }\n"
                   ".entry k() {\n .reg .pred %p<2>;\n .reg .b32 %r<3>;\n .reg .b32 v;\n"
                   " $L0:\n @%p1 bra $L0;\n mov.u32 %r2, %tid.x;\n mov.u32 v, %r2;\n"
                   " { .param .b32 a; .param .b32 r; call (r), f, (a); }\n ret;\n}\n");
  EXPECT_EQ(verify(m), std::vector<std::string>{});
}

TEST(Verifier, ReportsEveryProblem) {
  Module m = parse(kHeader +
                   ".global .b32 x;\n.global .b32 x;\n"
                   ".entry k() {\n .reg .b32 %r<3>;\n"
                   " $L0:\n $L0:\n mov.u32 %r3, 1;\n @%p1 bra nowhere;\n call missing;\n ret;\n}\n"
                   ".entry k() { ret; }\n");
  EXPECT_EQ(verify(m),
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

}  // namespace
}  // namespace warpforge::ptx
