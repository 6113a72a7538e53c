#include "kernels/registry.hpp"

#include "kernels/bf16_gemm.hpp"
#include "kernels/mma_demo.hpp"

namespace warpforge::examples {

const std::vector<BuiltinKernel>& builtin_kernels() {
  static const std::vector<BuiltinKernel> kAll = {
      {"mma_m16n8k8_demo", "one warp, mma.sync m16n8k8 f16 -> f32; row r of D is r + 9", ptx::Target::sm_80,
       mma_demo_kernel},
      {"bf16_gemm_m16n8k16", "single-warp bf16 GEMM, one 16x8 tile per CTA, mma.sync m16n8k16",
       ptx::Target::sm_80, bf16_gemm_kernel},
  };
  return kAll;
}

const BuiltinKernel* find_builtin(const std::string& name) {
  for (const auto& k : builtin_kernels())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace warpforge::examples
