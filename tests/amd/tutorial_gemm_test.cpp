// The three tutorial kernels: compiled by LLVM for gfx90a and gfx942 (the
// disassembly must hold the MFMA, LDS and, for the edge kernel, buffer
// instructions) and run on the wave64 simulator against an fp32 reference.
#include "amd_test_support.hpp"
#include "kernels/amd_mfma_gemm.hpp"

namespace warpforge::amdgpu::testing {
namespace {

using examples::kAmdGemmTile;

// C = A·Bᵀ on the simulator for an m x n x k problem; C is poisoned first and
// allocated to exactly m·n floats, so any store outside it is reported.
void expect_gemm_on_sim(const KernelIR& kernel, int m, int n, int k, bool shape_params) {
  Bf16Matrix a = random_bf16(static_cast<std::size_t>(m) * k),
             b = random_bf16(static_cast<std::size_t>(n) * k);
  sim::GlobalMemory mem;
  std::uint64_t da = upload(mem, a.bits), db = upload(mem, b.bits),
                dc = poisoned_f32(mem, static_cast<std::size_t>(m) * n);
  sim::amdgpu::Args args{da, db, dc};
  if (shape_params) args.insert(args.end(), {std::uint64_t(m), std::uint64_t(n), std::uint64_t(k)});
  sim::amdgpu::Grid grid{static_cast<std::uint32_t>((n + kAmdGemmTile - 1) / kAmdGemmTile),
                         static_cast<std::uint32_t>((m + kAmdGemmTile - 1) / kAmdGemmTile), 1};
  sim::amdgpu::run(kernel, grid, args, mem);
  std::vector<double> want(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += double(a.values[i * k + p]) * b.values[j * k + p];
      want[i * n + j] = s;
    }
  EXPECT_TRUE(all_close(download<float>(mem, dc, want.size()), want))
      << kernel.name << " m=" << m << " n=" << n << " k=" << k;
}

TEST(AmdTutorialOnSim, Fixed128MatchesReference) {
  expect_gemm_on_sim(examples::amd_gemm_128_kernel(Target::gfx942), 128, 128, 128, false);
}

TEST(AmdTutorialOnSim, RuntimeShapesMatchReference) {
  KernelIR kernel = examples::amd_gemm_runtime_kernel(Target::gfx942);
  for (auto [m, n, k] : {std::tuple{64, 128, 48}, {128, 64, 16}})
    expect_gemm_on_sim(kernel, m, n, k, true);
}

TEST(AmdTutorialOnSim, EdgeTiles117By121MatchReferenceWithoutOutOfBoundsAccess) {
  // C holds exactly 117 x 121 floats: a store past it would raise SimError.
  EXPECT_NO_THROW(
      expect_gemm_on_sim(examples::amd_gemm_edge_kernel(Target::gfx942), 117, 121, 128, true));
}

TEST(AmdTutorialOnSim, RuntimeKernelWithoutGuardsReadsPastTheEdgeAndIsReported) {
  // The runtime-shape kernel assumes m, n multiples of 64: on 117 x 121 its
  // loads leave A, and the simulator says where.
  KernelIR kernel = examples::amd_gemm_runtime_kernel(Target::gfx942);
  try {
    expect_gemm_on_sim(kernel, 117, 121, 128, true);
    FAIL() << "no out-of-bounds access reported";
  } catch (const SimError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("amd_gemm_runtime"), std::string::npos) << what;
    EXPECT_NE(what.find("global load of 16 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("workgroup ("), std::string::npos) << what;
    EXPECT_NE(what.find("lane"), std::string::npos) << what;
  }
}

class AmdTutorialCompiles : public ::testing::TestWithParam<Target> {};

TEST_P(AmdTutorialCompiles, EveryKernelHasMfmaLdsAndBarriers) {
  Target t = GetParam();
  const std::string mfma = mnemonic(Mfma::f32_32x32x8_bf16, t);
  for (auto build : {examples::amd_gemm_128_kernel, examples::amd_gemm_runtime_kernel,
                     examples::amd_gemm_edge_kernel}) {
    KernelIR kernel = build(t);
    std::string dis = compiled_disassembly(kernel, t);
    // Two per K stage of 16; opt may unroll the fixed-size loop.
    int mfmas = count(dis, mfma + " ");
    EXPECT_TRUE(mfmas >= 2 && mfmas % 2 == 0)
        << mfmas << " in " << kernel.name << " on " << to_string(t) << ":\n"
        << dis;
    EXPECT_GE(count(dis, "ds_write_b128"), 1) << kernel.name;
    EXPECT_GE(count(dis, "s_barrier"), 2) << kernel.name;
    // One readfirstlane, the staging choice: more would be LLVM looping over
    // per-lane buffer descriptors (a waterfall loop).
    EXPECT_EQ(count(dis, "v_readfirstlane_b32"), 1) << kernel.name << ":\n" << dis;
    EXPECT_EQ(count(dis, "scratch_"), 0) << kernel.name << ": registers spilled to scratch";
    bool edge = kernel.name == "amd_gemm_edge";
    EXPECT_EQ(count(dis, "buffer_load_dwordx4") > 0, edge) << kernel.name;
    EXPECT_EQ(count(dis, "global_load_dwordx4") > 0, !edge) << kernel.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, AmdTutorialCompiles,
                         ::testing::Values(Target::gfx90a, Target::gfx942),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace warpforge::amdgpu::testing
