// Which PTX the CUDA backend compiles as a whole program instead of linking
// (src/runtime/cuda/jit.hpp): exactly the modules that use setmaxnreg, which
// a linked (relocatable) compile would drop.
#include <gtest/gtest.h>

#include "../../src/runtime/cuda/jit.hpp"
#include "warpforge/dsl.hpp"

namespace warpforge::runtime::cuda {
namespace {

TEST(WholeProgram, ChosenForKernelsThatMoveRegisters) {
  dsl::Kernel plain("plain", dsl::Target::sm_90a);
  plain.bar_sync(0);
  EXPECT_FALSE(needs_whole_program(plain.module().to_ptx()));
  for (bool increase : {false, true}) {
    dsl::Kernel giving("giving", dsl::Target::sm_90a);
    giving.maxntid(256);
    if (increase)
      giving.setmaxnreg_inc(232);
    else
      giving.setmaxnreg_dec(40);
    EXPECT_TRUE(needs_whole_program(giving.module().to_ptx()));
  }
}

}  // namespace
}  // namespace warpforge::runtime::cuda
