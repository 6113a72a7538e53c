// The sm90a GEMM kernel as the driver's ptxas sees it: the schedules
// (cooperative, ping-pong, clusters, stream-K) in their largest tiles
// assemble for sm_90a without spilling to local memory and without
// serialized wgmma.
#include <gtest/gtest.h>

#include <regex>

#include "../../src/ops/gemm/sm90a_kernel.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

TEST(GemmSm90aPtxas, EveryScheduleAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found: the kernels were not assembled";
  const Sm90aSpec specs[] = {
      {.tile_n = 256, .stages = 3},
      {.b_k_major = false, .tile_n = 256, .stages = 3, .stream_k = true},
      {.a_k_major = false, .tile_n = 256, .stages = 3, .stream_k = true},
      {.a_k_major = false, .b_k_major = false, .tile_n = 256, .stages = 3, .stream_k = true},
      {.d = DType::f32, .tile_n = 128, .stages = 4, .stream_k = true},
      {.pingpong = true, .wg_rows = 128, .tile_n = 128, .stages = 4},
      {.tile_n = 256, .stages = 3, .cluster_m = 2},
  };
  for (const Sm90aSpec& s : specs) {
    SCOPED_TRACE(s.name());
    // -c: as the driver's linker compiles it (runtime/cuda/jit.cpp), where a
    // call to a subroutine (a 64-bit division, say) serializes every wgmma.
    // (There setmaxnreg is dropped too, C7504: the consumers live within the
    // entry's 168 registers, which is what the spill count checks.)
    auto result = ptx::run_ptxas(build_sm90a_gemm(s).to_ptx(), "sm_90a", {"-c", "-v"});
    ASSERT_TRUE(result.ok) << result.log;
    std::smatch spill;
    ASSERT_TRUE(std::regex_search(result.log, spill, std::regex(R"((\d+) bytes spill stores)"))) << result.log;
    EXPECT_EQ(spill[1], "0") << result.log;
    EXPECT_EQ(result.log.find("wgmma.mma_async instructions are serialized"), std::string::npos) << result.log;
  }
}

}  // namespace
}  // namespace warpforge::ops
