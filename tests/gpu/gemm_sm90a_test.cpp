// The sm90a GEMM kernel on the GPU over the same cases as on the simulator
// (tests/ops/gemm_sm90a_cases.hpp), plus a large shape with every tile edge
// ragged. Skips where the GPU is not sm_90a.
#include <gtest/gtest.h>

#include "gpu/gpu_fixture.hpp"
#include "ops/gemm_sm90a_cases.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::gpu_testing::GpuTest;

class GemmSm90aGpu : public GpuTest, public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (runtime::Device::cuda(0).target() != ptx::Target::sm_90a)
      GTEST_SKIP() << "the sm90a kernel needs an sm_90a GPU; this one is "
                   << ptx::name(runtime::Device::cuda(0).target());
  }
};

TEST_P(GemmSm90aGpu, MatchesTheFp64Reference) {
  if (IsSkipped()) return;
  check_gemm_case(runtime::Device::cuda(0), GemmKernel::sm90a, sm90a_cases()[GetParam()]);
}

INSTANTIATE_TEST_SUITE_P(Cases, GemmSm90aGpu, ::testing::Range(0, static_cast<int>(sm90a_cases().size())));

TEST_F(GemmSm90aGpu, LargeRaggedShapeWithTheHeuristicsChoice) {
  if (IsSkipped()) return;
  for (bool b_row : {true, false}) {
    GemmCase c{1024 + 67, 1024 + 131, 1024 + 75};  // all 3 mod 8: pad 5 aligns every leading dimension
    c.pad = 5;
    c.d = DType::bf16;
    c.b_row = b_row;
    check_gemm_case(runtime::Device::cuda(0), GemmKernel::sm90a, c);
  }
}

// Clusters at a size where every resident pair walks several units and the
// grid is the driver's count of resident pairs.
TEST_F(GemmSm90aGpu, LargeRaggedShapeWithClusters) {
  if (IsSkipped()) return;
  for (int layout = 0; layout < 4; ++layout)
    for (auto [cm, cn] : {std::pair{2, 1}, std::pair{1, 2}}) {
      GemmCase c{2048 + 67, 2048 + 131, 1024 + 75};
      c.pad = 5;
      c.d = DType::bf16;
      c.a_row = layout & 1;
      c.b_row = layout & 2;
      c.config = sm90a_config(128, 256, 3, cm, cn);
      check_gemm_case(runtime::Device::cuda(0), GemmKernel::sm90a, c);
    }
}

// Stream-K where the grid is 132 CTAs or so: 153 units of 128 x 256 (all
// split, a remainder of under half a wave) and 306 of 128 x 128, in every
// layout, with C; then repeated launches on new data, which race if a flag
// is left raised or a sum is read before it is published.
TEST_F(GemmSm90aGpu, LargeRaggedShapesWithStreamK) {
  if (IsSkipped()) return;
  for (int layout = 0; layout < 4; ++layout) {
    GemmCase c{2048 + 67, 2048 + 131, 1024 + 75};
    c.pad = 5;
    c.d = DType::bf16;  // f32 D at this K meets 1e-4 of the fp64 sums only just, in any order of summation
    c.a_row = layout & 1;
    c.b_row = layout & 2;
    c.with_c = layout == 1;
    c.beta = c.with_c ? 1.0f : 0.0f;
    c.config = sm90a_config(128, layout < 2 ? 256 : 128, 3);
    c.config->stream_k = true;
    check_gemm_case(runtime::Device::cuda(0), GemmKernel::sm90a, c);
  }
  GemmConfig config = sm90a_config(128, 256, 3);
  config.stream_k = true;
  check_runs_on_new_inputs(runtime::Device::cuda(0), 2048 + 67, 2048 + 131, 512 + 75, 5, config);
}

// Every sm90a launch may start while the stream's previous kernel runs
// (LaunchConfig::overlap_previous) and waits for it before touching memory.
// A chain of decode GEMMs (64 CTAs: the next launch's find SMs free), each
// reading the D the one before wrote and writing over the A the one before
// read, queued with no synchronisation, gives the bits of the same chain
// run one launch at a time.
TEST_F(GemmSm90aGpu, ChainedLaunchesGiveTheBitsOfOnesRunApart) {
  if (IsSkipped()) return;
  const runtime::Device dev = runtime::Device::cuda(0);
  const std::int64_t m = 64, n = 4096;
  std::mt19937 rng(std::random_device{}());
  auto w = make_matrix(dev, DType::bf16, {0, n, n, false}, rng);  // N(0,1): alpha 1/64 keeps D near N(0,1)
  auto x0 = make_matrix(dev, DType::bf16, {0, m, n, true}, rng);
  auto x1 = make_matrix(dev, DType::bf16, {0, m, n, true}, rng, true);
  const HostTensor start = HostTensor::download(x0.view);
  Gemm g(x0.view, w.view, nullptr, x1.view, {.alpha = 1.0f / 64, .kernel = GemmKernel::sm90a});
  constexpr int kSteps = 24;
  auto chain = [&](bool apart) {
    start.upload(x0.view);
    for (int i = 0; i < kSteps; ++i) {
      const DeviceMatrix &from = i % 2 ? x1 : x0, &to = i % 2 ? x0 : x1;
      g.execute(from.view, w.view, nullptr, to.view);
      if (apart) dev.synchronize();
    }
    dev.synchronize();
    return HostTensor::download(x0.view);  // kSteps is even: the chain ends in x0
  };
  const HostTensor apart = chain(true), queued = chain(false);
  EXPECT_EQ(apart.bytes, queued.bytes);
  EXPECT_NE(apart.bytes, start.bytes);
}

}  // namespace
}  // namespace warpforge::ops::testing
