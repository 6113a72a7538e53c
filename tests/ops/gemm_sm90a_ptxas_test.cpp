// The sm90a GEMM kernel as ptxas sees it: the schedules (cooperative,
// ping-pong, clusters, stream-K) in their largest tiles assemble for sm_90a
// within the consumers' 232 registers, without spilling to local memory.
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
    auto result = ptx::run_ptxas(build_sm90a_gemm(s).to_ptx(), "sm_90a", {"-v"});
    ASSERT_TRUE(result.ok) << result.log;
    std::smatch spill;
    ASSERT_TRUE(std::regex_search(result.log, spill, std::regex(R"((\d+) bytes spill stores)"))) << result.log;
    EXPECT_EQ(spill[1], "0") << result.log;
    // ptxas serializes wgmma it cannot prove safe to overlap, and says so.
    EXPECT_EQ(result.log.find("wgmma.mma_async instructions are serialized"), std::string::npos) << result.log;
  }
}

}  // namespace
}  // namespace warpforge::ops
