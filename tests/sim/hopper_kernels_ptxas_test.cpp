// The Hopper test kernels (hopper_kernels.hpp, wgmma_kernels.hpp) are real
// sm_90a PTX: ptxas assembles each, so the GPU test that runs them against
// the simulator (tests/gpu/hopper_test.cpp) fails only on semantics. Skips
// without ptxas.
#include <gtest/gtest.h>

#include "warpforge/ptx/ptxas.hpp"
#include "wgmma_kernels.hpp"

namespace warpforge::sim::testing {
namespace {

TEST(HopperKernels, AssembleWithPtxas) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "no ptxas ($WARPFORGE_PTXAS, $PATH, /usr/local/cuda/bin)";
  std::vector<std::pair<std::string, std::string>> texts = {
      {"tma_load 2d", load_kernel(4096, 2)},
      {"tma_load 3d", load_kernel(256, 3)},
      {"multicast", ptx_module(kMulticastKernel)},
      {"bulk copy to the partner", bulk_to_peer_kernel()},
      {"warp-specialized gemm", ws_gemm_kernel()},
  };
  for (const NamedCase& c : wgmma_layout_cases()) texts.emplace_back(c.name, kernel(c.c, 16384));
  for (const auto& [name, text] : texts) {
    const ptx::PtxasResult r = ptx::run_ptxas(text, "sm_90a");
    EXPECT_TRUE(r.ok) << name << ":\n" << r.log;
  }
}

}  // namespace
}  // namespace warpforge::sim::testing
