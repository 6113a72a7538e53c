// The documented example kernels (built with the DSL and the tile
// primitives, whose fragment layouts come from layout/) run on the
// simulator, whose fragment semantics come from the PTX ISA tables: the two
// independent readings of the tables check each other here.
#include <random>

#include "kernels/bf16_gemm.hpp"
#include "kernels/mma_demo.hpp"
#include "kernels/warp_gemm.hpp"
#include "sim_harness.hpp"

namespace warpforge::sim::testing {
namespace {

class Examples : public SimTest {
 protected:
  std::vector<float> launch(const ptx::Module& m, const std::string& kernel, runtime::Dim3 grid,
                            const std::vector<runtime::DevicePtr>& buffers, std::size_t out_index,
                            std::size_t out_count, const std::vector<std::uint32_t>& scalars = {}) {
    std::vector<runtime::KernelArg> args;
    for (auto b : buffers) args.push_back(arg_u64(b));
    for (auto s : scalars) args.push_back(arg_u32(s));
    auto loaded = sim.load(m);
    sim.launch(*loaded, kernel, {.grid = grid, .block = {32, 1, 1}}, args, nullptr);
    return download<float>(buffers[out_index], out_count);
  }
};

TEST_F(Examples, MmaDemoRowsAreRPlusNine) {
  const auto data = examples::mma_demo_data();
  auto d = launch(examples::mma_demo_kernel(ptx::Target::sm_80), "mma_m16n8k8_demo", {1, 1, 1},
                  {upload(data.a), upload(data.bt), zeros<float>(128)}, 2, 128);
  EXPECT_EQ(d, data.expected);
}

TEST_F(Examples, SingleWarpBf16GemmAllDocumentedCases) {
  std::mt19937 rng(7);
  const ptx::Module m = examples::bf16_gemm_kernel(ptx::Target::sm_80);
  for (const auto& c : examples::bf16_gemm_cases()) {
    const auto data = examples::bf16_gemm_data(c, rng);
    const auto mn = static_cast<std::size_t>(c.m * c.n);
    auto d = launch(m, "bf16_gemm_m16n8k16",
                    {static_cast<std::uint32_t>(c.n / 8), static_cast<std::uint32_t>(c.m / 16), 1},
                    {upload(data.a), upload(data.bt), zeros<float>(mn)}, 2, mn,
                    {static_cast<std::uint32_t>(c.m), static_cast<std::uint32_t>(c.n),
                     static_cast<std::uint32_t>(c.k)});
    EXPECT_EQ(examples::count_mismatches(d, data.reference, 1e-2, 1e-2), 0u)
        << c.m << "x" << c.n << "x" << c.k;
  }
}

TEST_F(Examples, WarpGemmTilePrimitives) {
  std::mt19937 rng(11);
  {
    const auto data = examples::warp_gemm_16x8x16_data(rng);
    auto d = launch(examples::warp_gemm_16x8x16_kernel(ptx::Target::sm_80), "warp_gemm_16x8x16",
                    {1, 1, 1}, {upload(data.a), upload(data.bt), zeros<float>(128)}, 2, 128);
    EXPECT_EQ(examples::count_mismatches(d, data.reference, 1e-3, 1e-3), 0u);
  }
  {
    const auto data = examples::warp_gemm_64x32x32_data(rng);
    auto d = launch(
        examples::warp_gemm_64x32x32_kernel(ptx::Target::sm_80), "warp_gemm_64x32x32", {1, 1, 1},
        {upload(data.a), upload(data.bt), upload(data.c), zeros<float>(64 * 32)}, 3, 64 * 32);
    EXPECT_EQ(examples::count_mismatches(d, data.reference, 1e-3, 1e-3), 0u);
  }
}

}  // namespace
}  // namespace warpforge::sim::testing
