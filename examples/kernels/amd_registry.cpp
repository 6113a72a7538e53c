#include "kernels/amd_registry.hpp"

#include "kernels/amd_mfma_gemm.hpp"

namespace warpforge::examples {

const std::vector<AmdExample>& amd_examples() {
  static const std::vector<AmdExample> kAll = {
      {"amd_gemm_128",
       "bf16 C = A·Bᵀ, 128x128x128, one wave per 32x32 tile, v_mfma_f32_32x32x8 bf16, K via LDS",
       amd_gemm_128_kernel},
      {"amd_gemm_runtime", "the same with runtime m, n, k (m, n multiples of 64, k of 16)",
       amd_gemm_runtime_kernel},
      {"amd_gemm_edge",
       "edge tiles: buffer-resource-guarded loads, per-row guarded stores (e.g. m=117, n=121)",
       amd_gemm_edge_kernel},
  };
  return kAll;
}

const AmdExample* find_amd_example(const std::string& name) {
  for (const auto& e : amd_examples())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace warpforge::examples
