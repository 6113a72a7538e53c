// The sm90a GEMM kernel as the driver's ptxas sees it: the schedules
// (cooperative, ping-pong, clusters, stream-K) in their largest tiles
// assemble for sm_90a, compiled as the driver compiles them (whole, for
// their setmaxnreg), without spilling, serialized wgmma or dropped setmaxnreg.
#include <gtest/gtest.h>

#include "../../src/ops/gemm/sm90a_kernel.hpp"
#include "driver_ptxas.hpp"
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
    testing::expect_fast_assembly(build_sm90a_gemm(s).to_ptx(), s.name());
  }
}

}  // namespace
}  // namespace warpforge::ops
