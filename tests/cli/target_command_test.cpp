// --device sim --target: the simulator standing for another GPU. On sm_100a,
// `warpforge gemm-amax` picks the experimental sm100a kernel by itself and
// passes --check for MXFP8, MXFP4 and NVFP4 with every C dtype each format
// allows, on ragged shapes (M, N, K short of the 128 x 128 tile and of the
// 128-code scale step) and L = 3; `warpforge gemm` there takes the sm80
// kernel, the sm90a one (wgmma) not existing on sm_100a. `warpforge ptx`
// prints both sm_100a kernels (the bf16 GEMM, GemmAmax's) as ptxas for
// sm_100a assembles them. And the refusals.
#include <gtest/gtest.h>

#include "run_cli.hpp"
#include "warpforge/ptx/ptxas.hpp"

namespace warpforge::cli::testing {
namespace {

struct Format {
  const char *ab, *sf, *vec;
  std::vector<const char*> c;
};

TEST(TargetCommand, GemmAmaxOnAnSm100aSimulatorPicksTheTcgen05KernelAndPassesCheck) {
  const std::vector<Format> formats = {
      {"e4m3", "e8m0", "32", {"f32", "bf16", "f16"}},  // MXFP8 (FP8 C from FP8 data is refused)
      {"e5m2", "e8m0", "32", {"bf16"}},
      {"e2m1", "e8m0", "32", {"f32", "bf16", "f16", "e4m3", "e5m2", "e2m1"}},  // MXFP4
      {"e2m1", "e4m3", "16", {"f32", "bf16", "f16", "e4m3", "e5m2", "e2m1"}},  // NVFP4
  };
  for (const Format& f : formats)
    for (const char* c : f.c) {
      const std::string args = std::string("gemm-amax --m 70 --n 64 --k 96 --l 3 --ab ") + f.ab +
                               " --sf " + f.sf + " --sf-vec " + f.vec + " --c " + c +
                               " --device sim --target sm_100a --check";
      const Result r = run(args);
      EXPECT_EQ(r.status, 0) << args << "\n" << r.output;
      EXPECT_NE(r.output.find(": kernel sm100a, 128x128 tiles, tcgen05 block-scaled MMA"),
                std::string::npos)
          << args << "\n"
          << r.output;
      EXPECT_NE(r.output.find("never on a Blackwell GPU"), std::string::npos) << args << "\n"
                                                                              << r.output;
      EXPECT_NE(r.output.find("check: PASS (0 of 13440 elements outside"), std::string::npos)
          << args << "\n"
          << r.output;
    }
}

TEST(TargetCommand, GemmAmaxOnTheDefaultSimulatorDoesNotPickIt) {
  const Result r = run("gemm-amax --m 70 --n 64 --k 96 --device sim --check");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("kernel sm100a"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check: PASS"), std::string::npos) << r.output;
}

TEST(TargetCommand, GemmOnAnSm100aSimulatorTakesTheSm80Kernel) {
  const Result r = run("gemm --m 72 --n 40 --k 48 --device sim --target sm_100a --check");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("kernel: sm80"), std::string::npos) << r.output;
  EXPECT_TRUE(refuses_listing(
      "gemm --m 64 --n 64 --k 64 --kernel sm90a --device sim --target sm_100a",
      "device 'warpforge simulator' has target sm_100a; the sm90a kernel needs sm_90a (compute "
      "capability 9.0)"));
}

TEST(TargetCommand, RefusesATargetItDoesNotKnowOrOneWithoutTheSimulator) {
  EXPECT_TRUE(refuses("gemm-amax --device sim --target sm_70",
                      "--target 'sm_70' refused; accepted: sm_80, sm_89, "
                      "sm_90a, sm_100a"));
  EXPECT_TRUE(refuses(
      "gemm-amax --device cuda --target sm_100a",
      "--target sm_100a without --device sim: it sets the GPU the simulator stands for (a GPU's "
      "target is its own); add --device sim"));
  EXPECT_TRUE(
      refuses("gemm --m 8 --n 8 --k 8 --target sm_90a",
              "--target sm_90a without --device sim: it sets the GPU the simulator stands for"));
}

TEST(TargetCommand, PtxPrintsTheSm100aKernelsAsPtxasAssemblesThem) {
  for (const std::string kernel :
       {"gemm_sm100a", "gemm_amax_sm100a", "gemm_sm100a_pair", "gemm_amax_sm100a_pair"}) {
    const Result r = run("ptx " + kernel + " --target sm_100a");
    ASSERT_EQ(r.status, 0) << kernel << "\n" << r.output;
    EXPECT_NE(r.output.find(".target sm_100a"), std::string::npos) << kernel;
    const bool pair = kernel.ends_with("_pair");
    EXPECT_NE(
        r.output.find(pair ? "tcgen05.mma.cta_group::2.kind::" : "tcgen05.mma.cta_group::1.kind::"),
        std::string::npos)
        << kernel;
    if (!ptx::find_ptxas()) continue;  // assembled below when the CUDA toolkit is present
    const auto assembled = ptx::run_ptxas(r.output, "sm_100a");
    EXPECT_TRUE(assembled.ok) << kernel << ":\n" << assembled.log;
  }
  const Result list = run("ptx --list");
  EXPECT_NE(list.output.find("gemm_sm100a\t"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("gemm_amax_sm100a\t"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("gemm_sm100a_pair\t"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("gemm_amax_swapped\t"), std::string::npos) << list.output;
  EXPECT_TRUE(refuses(
      "ptx gemm_sm100a --target sm_90a",
      "--target sm_90a refused for 'gemm_sm100a': it is built for sm_100a only (its instructions "
      "exist there alone); accepted: sm_100a"));
}

// The swapped block-scaled kernel's sample prints for its own target and assembles.
TEST(TargetCommand, SwappedGemmAmaxSamplePrintsAndAssembles) {
  const Result r = run("ptx gemm_amax_swapped");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(".target sm_90a"), std::string::npos);
  EXPECT_NE(r.output.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"), std::string::npos);
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found (no CUDA toolkit): the sample is not assembled";
  const auto assembled = ptx::run_ptxas(r.output, "sm_90a");
  EXPECT_TRUE(assembled.ok) << assembled.log;
}

}  // namespace
}  // namespace warpforge::cli::testing
