// GemmConfig::describe() and parse_gemm_config() are inverses; malformed
// text is refused, not half read.
#include <gtest/gtest.h>

#include "warpforge/ops/gemm.hpp"

namespace warpforge::ops {
namespace {

TEST(GemmConfigText, DescribeAndParseAreInverses) {
  const GemmConfig configs[] = {
      {},
      {.tile_m = 128, .tile_n = 256, .tile_k = 64, .stages = 3, .warps_m = 2, .warps_n = 1},
      {.tile_m = 128, .tile_n = 256, .tile_k = 64, .stages = 3, .warps_m = 2, .warps_n = 1, .cluster_m = 2},
      {.tile_m = 64, .tile_n = 256, .tile_k = 64, .stages = 4, .warps_m = 1, .warps_n = 1, .cluster_n = 2,
       .pingpong = true},
      {.tile_m = 128, .tile_n = 256, .tile_k = 64, .stages = 3, .warps_m = 2, .warps_n = 1, .stream_k = true},
      {.tile_m = 128, .tile_n = 128, .tile_k = 64, .stages = 3, .warps_m = 1, .warps_n = 1, .pingpong = true,
       .stream_k = true},  // text for a configuration the kernel refuses, still an inverse
  };
  for (const GemmConfig& c : configs) {
    const auto parsed = parse_gemm_config(c.describe());
    ASSERT_TRUE(parsed) << c.describe();
    EXPECT_EQ(*parsed, c) << c.describe();
  }
  EXPECT_EQ(parse_gemm_config("128x256x64 s3 w2x1 c1x2 pingpong")->describe(), "128x256x64 s3 w2x1 c1x2 pingpong");
  EXPECT_TRUE(parse_gemm_config("128x256x64 s3 w2x1 c1x1 streamk")->stream_k);
}

TEST(GemmConfigText, RefusesMalformedText) {
  for (const char* text : {"", "128x256x64", "128x256x64 s3 w2x1", "128x256x64 s3 w2x1 c1x1 pingpongs",
                           "128x256x64 s3 w2x1 c1x1 fast", "128x256x64  s3 w2x1 c1x1", "128x256x64 s0 w2x1 c1x1",
                           "128x-256x64 s3 w2x1 c1x1", "128x256x64 s3 w2x1 c1x1 ", "0x256x64 s3 w2x1 c1x1",
                           "+128x256x64 s3 w2x1 c1x1", "128x256x64 s3 w2x1 c1x1 streamk pingpong",
                           "128x256x64 s3 w2x1 c1x1 streamk streamk", "128x256x64 s3 w2x1 c1x1 stream-k"})
    EXPECT_FALSE(parse_gemm_config(text)) << "'" << text << "'";
}

}  // namespace
}  // namespace warpforge::ops
