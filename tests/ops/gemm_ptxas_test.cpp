// The sm80 GEMM kernel as ptxas sees it: every configuration family, layout,
// copy width and D dtype assembles for sm_80 and for sm_90a (where the sm80
// kernel also runs, for shapes TMA cannot describe), within the register
// file, without spilling its accumulators to local memory.
#include <gtest/gtest.h>

#include <regex>

#include "../../src/ops/gemm/sm80_kernel.hpp"
#include "ops/ptxas_record.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

TEST(GemmPtxas, EverySpecialisationAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas not found: the kernels were not assembled";
  const GemmConfig configs[] = {
      {.tile_m = 128, .tile_n = 128, .tile_k = 32, .stages = 4, .warps_m = 2, .warps_n = 2},
      {.tile_m = 64, .tile_n = 64, .tile_k = 32, .stages = 3, .warps_m = 2, .warps_n = 2},
      {.tile_m = 128, .tile_n = 256, .tile_k = 32, .stages = 3, .warps_m = 2, .warps_n = 4},
      {.tile_m = 32, .tile_n = 32, .tile_k = 16, .stages = 5, .warps_m = 1, .warps_n = 1},
  };
  int i = 0;
  for (const GemmConfig& config : configs)
    for (int layout :
         {i % 4, (i + 3) % 4}) {  // two layouts per configuration, all four over the families
      Sm80KernelSpec s;
      s.config = config;
      s.ab_dtype = i % 2 ? DType::f16 : DType::bf16;
      s.d_dtype = i % 3 == 0 ? DType::f32 : i % 3 == 1 ? DType::bf16 : DType::f16;
      s.a_row_major = layout & 1;
      s.b_row_major = layout & 2;
      s.d_row_major = i % 4 != 3;
      s.has_c = i % 2 == 0;
      s.c_row_major = i % 3 != 0;
      s.a_vector = (i % 4 == 1) ? 1 : 8 >> (i % 3);
      s.b_vector = (i % 4 == 2) ? 1 : 8;
      s.c_pairs = s.has_c && s.c_row_major;
      s.d_pairs = s.d_row_major;
      ++i;
      const std::string text = build_sm80_gemm(s).to_ptx();
      for (const char* arch : {"sm_80", "sm_90a"}) {
        SCOPED_TRACE(s.kernel_name() + " for " + arch);
        auto result = testing::recorded_ptxas(text, arch, {"-v"});
        ASSERT_TRUE(result.ok) << result.log;
        std::smatch spill;
        ASSERT_TRUE(std::regex_search(result.log, spill, std::regex(R"((\d+) bytes spill stores)")))
            << result.log;
        EXPECT_EQ(spill[1], "0") << result.log;
      }
    }
}

}  // namespace
}  // namespace warpforge::ops
