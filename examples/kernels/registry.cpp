#include "kernels/registry.hpp"

#include "kernels/bf16_gemm.hpp"
#include "kernels/mma_demo.hpp"
#include "kernels/stream_read.hpp"
#include "kernels/warp_gemm.hpp"

namespace warpforge::examples {

const std::vector<BuiltinKernel>& builtin_kernels() {
  static const std::vector<BuiltinKernel> kAll = {
      {"mma_m16n8k8_demo", "one warp, mma.sync m16n8k8 f16 -> f32; row r of D is r + 9", ptx::Target::sm_80,
       mma_demo_kernel},
      {"bf16_gemm_m16n8k16", "single-warp bf16 GEMM, one 16x8 tile per CTA, mma.sync m16n8k16",
       ptx::Target::sm_80, bf16_gemm_kernel},
      {"warp_gemm_16x8x16", "warp::gemm tile primitive: D[16,8] = A[16,16]·B[16,8] f16, one m16n8k16 atom",
       ptx::Target::sm_80, warp_gemm_16x8x16_kernel},
      {"warp_gemm_64x32x32", "warp::gemm nest of 4x4x2 atoms, beta = 1, A/B via shared memory and ldmatrix",
       ptx::Target::sm_80, warp_gemm_64x32x32_kernel},
      {kStreamReadKernel, "reads a buffer once in 16-byte vectors, XOR-folded per warp: a read-bound kernel's floor",
       ptx::Target::sm_80, stream_read_kernel},
  };
  return kAll;
}

const BuiltinKernel* find_builtin(const std::string& name) {
  for (const auto& k : builtin_kernels())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace warpforge::examples
