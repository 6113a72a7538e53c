// ptxas run the way the CUDA backend has the driver compile a kernel
// (src/runtime/cuda/jit.hpp): relocatable (-c), as the driver's linker
// compiles, unless the PTX uses setmaxnreg, which is compiled whole. -v
// reports registers and spills; the checks every sm90a kernel must pass
// are in expect_fast_assembly.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "../../src/runtime/cuda/jit.hpp"
#include "ops/ptxas_record.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::ops::testing {

inline ptx::PtxasResult assemble_as_driver(const std::string& ptx) {
  if (runtime::cuda::needs_whole_program(ptx)) return recorded_ptxas(ptx, "sm_90a", {"-v"});
  return recorded_ptxas(ptx, "sm_90a", {"-c", "-v"});
}

// Assembles without spilling to local memory and without serialized wgmma
// (which a call to a subroutine, a 64-bit division say, causes in a
// relocatable compile: C7509); setmaxnreg must not be dropped (C7504).
inline void expect_fast_assembly(const std::string& ptx, const std::string& what) {
  const ptx::PtxasResult r = assemble_as_driver(ptx);
  ASSERT_TRUE(r.ok) << what << ":\n" << r.log;
  EXPECT_NE(r.log.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << what << ":\n" << r.log;
  EXPECT_EQ(r.log.find("wgmma.mma_async instructions are serialized"), std::string::npos) << what << ":\n" << r.log;
  EXPECT_EQ(r.log.find("C7504"), std::string::npos) << what << ":\n" << r.log;
}

}  // namespace warpforge::ops::testing
