// The sm90a GEMM kernel as the driver's ptxas sees it: the schedules
// (cooperative, ping-pong, clusters, stream-K) in their largest tiles
// assemble for sm_90a, compiled as the driver compiles them (whole, for
// their setmaxnreg), without spilling, serialized wgmma or dropped setmaxnreg.
#include <gtest/gtest.h>

#include "../../src/ops/gemm/sm90a_kernel.hpp"
#include "driver_ptxas.hpp"
#include "warpforge/error.hpp"
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
      {.consumers = 1, .tile_n = 64, .stages = 8, .a_rows = 16},  // the decode tile
      {.tile_n = 224, .stages = 4},  // 32 columns stored from registers
      {.b_k_major = false, .tile_n = 224, .stages = 4},  // N-major B in 32-column boxes
      {.d = DType::f16, .tile_n = 160, .stages = 4, .has_c = true},
  };
  for (const Sm90aSpec& s : specs) {
    SCOPED_TRACE(s.name());
    testing::expect_fast_assembly(build_sm90a_gemm(s).to_ptx(), s.name());
  }
}

// The kernel builder refuses `s` with a message that says `rule`.
void expect_refused(const Sm90aSpec& s, const char* rule) {
  SCOPED_TRACE(s.name());
  try {
    build_sm90a_gemm(s);
    ADD_FAILURE() << "accepted";
  } catch (const warpforge::OpsError& e) {
    EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
  }
}

// a_rows is a whole number of swizzle atoms of a K-major A tile that no
// cluster along N shares; anything else is refused naming the rule.
TEST(GemmSm90aSpec, RefusesARowsItCannotLoad) {
  const Sm90aSpec bad[] = {
      {.consumers = 1, .tile_n = 64, .a_rows = 12},                      // not a multiple of 8
      {.consumers = 1, .tile_n = 64, .a_rows = 72},                      // past the tile
      {.a_k_major = false, .consumers = 1, .tile_n = 64, .a_rows = 8},   // M-major A
      {.tile_n = 128, .cluster_n = 2, .a_rows = 16},                     // A shared along N
  };
  for (const Sm90aSpec& s : bad) expect_refused(s, "a multiple of 8 up to tile_m");
}

// A pair along M shares N-major B's boxes equally, or not at all.
TEST(GemmSm90aSpec, RefusesBoxesAPairCannotShare) {
  for (int tile_n : {64, 96, 192, 224})
    expect_refused({.b_k_major = false, .tile_n = tile_n, .stages = 3, .cluster_m = 2}, "as many to each CTA of the pair");
}

}  // namespace
}  // namespace warpforge::ops
