// `warpforge gemm-amax` run as a user runs it (on the simulator): the check
// against the CPU reference on the default kernel and on the sm90a kernel's
// 2-CTA clusters (--tile, --cluster), and its refusals, each by its message.
#include <gtest/gtest.h>

#include "run_cli.hpp"

namespace warpforge::cli::testing {
namespace {

TEST(GemmAmaxCommand, ChecksAgainstTheReference) {
  Result r = run("gemm-amax --m 96 --n 80 --k 64 --l 2 --ab e2m1 --sf e4m3 --sf-vec 16 --c bf16 --device sim --check");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("96x80x64 L2 e2m1 x e4m3/16 -> bf16: amax"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check: PASS (0 of 15360 elements outside"), std::string::npos) << r.output;
}

// 128 x 256 tiles in 2-CTA clusters: M of three 128-row tiles (the second
// cluster's rank 1 has no rows), the sm90a kernel (named by --bench).
TEST(GemmAmaxCommand, RunsTheTileAndClusterGiven) {
  Result r = run("gemm-amax --m 300 --n 264 --k 128 --ab e4m3 --c f32 --tile 128x256 --cluster 2x1 --device sim "
                 "--check --bench");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("check: PASS (0 of 79200 elements outside"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kernel: sm90a"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bench: skipped: the CPU simulator's run time says nothing about a GPU's"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("TFLOP/s"), std::string::npos) << r.output;
}

TEST(GemmAmaxCommand, RefusesBadArgumentsSayingWhatIsAccepted) {
  EXPECT_TRUE(refuses("gemm-amax --cluster 2 --device sim",
                      "--cluster '2' refused; expected MxN with M and N from 1 to 2147483647 (e.g. 2x1)"));
  EXPECT_TRUE(refuses("gemm-amax --tile 128x0 --device sim",
                      "--tile '128x0' refused; expected MxN with M and N from 1 to 2147483647 (e.g. 128x256)"));
  EXPECT_TRUE(refuses("gemm-amax --sf-vec 8 --device sim", "--sf-vec '8' refused; accepted: 16, 32"));
  EXPECT_TRUE(refuses("gemm-amax --ab bf16 --device sim", "--ab 'bf16' refused; accepted: e4m3, e5m2, e2m1"));
  EXPECT_TRUE(refuses("gemm-amax --sf e5m2 --device sim", "--sf 'e5m2' refused; accepted: e8m0, e4m3"));
  EXPECT_TRUE(refuses("gemm-amax --c s8 --device sim", "--c 's8' refused; accepted: f32, bf16, f16, e4m3, e5m2, e2m1"));
  EXPECT_TRUE(refuses("gemm-amax --m 0 --device sim", "--m '0' refused; expected an integer from 1 to 2147483647"));
  EXPECT_TRUE(refuses("gemm-amax --device gpu", "--device 'gpu' refused; accepted: cuda, sim"));
  EXPECT_TRUE(refuses("gemm-amax --bogus 1 --device sim", "unexpected argument '--bogus'; see `warpforge gemm-amax --help`"));
  EXPECT_TRUE(refuses("gemm-amax --device sim --m", "--m needs a value; see `warpforge gemm-amax --help`"));
  // A cluster shape no kernel runs: the refusal of the sm80 kernel (which
  // takes whatever the sm90a kernel does not), naming where 2x1 runs.
  EXPECT_TRUE(refuses_listing("gemm-amax --m 256 --n 256 --k 64 --cluster 1x2 --device sim",
                              "GemmAmax refused 256x256x64 L1 e4m3 x e8m0/32 -> f32"));
  EXPECT_TRUE(refuses_listing("gemm-amax --m 256 --n 256 --k 64 --cluster 1x2 --device sim",
                      "cluster shape 1x2: the sm80 kernel runs without clusters (1x1 only; 2x1 runs on the sm90a "
                      "kernel, with 128x256 tiles of k-major A and B on sm_90a)"));
}

}  // namespace
}  // namespace warpforge::cli::testing
