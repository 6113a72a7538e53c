#include <gtest/gtest.h>

#include "warpforge/runtime/jit_log.hpp"

namespace warpforge::runtime {
namespace {

TEST(JitLog, QuotesThePtxLineEachMessageNames) {
  const std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\t  add.u33 %r1, %r2, %r3;\n";
  const std::string log =
      "ptxas application ptx input, line 4; error   : Unknown type '.u33'\n"
      "ptxas fatal   : Ptx assembly aborted due to errors\n";
  EXPECT_EQ(explain_jit_log(log, ptx),
            "ptxas application ptx input, line 4; error   : Unknown type '.u33'\n"
            "    4 | add.u33 %r1, %r2, %r3;\n"
            "ptxas fatal   : Ptx assembly aborted due to errors\n");
}

TEST(JitLog, LeavesLinesOutsideThePtxUnquoted) {
  EXPECT_EQ(explain_jit_log("ptxas application ptx input, line 99; error   : x\n", "one line\n"),
            "ptxas application ptx input, line 99; error   : x\n");
  EXPECT_EQ(explain_jit_log("", "ptx"), "(the JIT wrote no log)\n");
}

}  // namespace
}  // namespace warpforge::runtime
