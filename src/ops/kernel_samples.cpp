#include "warpforge/ops/kernel_samples.hpp"

#include "gemm/sm100a_kernel.hpp"
#include "gemm_amax/sm100a_gemm_amax_kernel.hpp"

namespace warpforge::ops {
namespace {

// MXFP8 (e4m3 codes, e8m0 scales per 32), 256 x 256 x 256, k-major A and B,
// n-major bf16 C: the TMA pipeline of 4 stages.
ptx::Module sample_gemm_amax() {
  GemmAmaxProblem p;
  p.m = p.n = p.k = 256;
  p.ab_dtype = runtime::DType::e4m3;
  p.sf_dtype = runtime::DType::e8m0;
  p.c_dtype = runtime::DType::bf16;
  p.a = p.b = p.c = {256, 1, 256 * 256};
  return build_sm100a_gemm_amax(p, 4);
}

}  // namespace

const std::vector<KernelSample>& kernel_samples() {
  static const std::vector<KernelSample> kAll = {
      {"gemm_sm100a",
       "ops::Gemm's sm100a kernel (experimental): TMA, tcgen05.mma kind::f16 into tensor memory, "
       "4 stages; bf16 row-major A, column-major B, f32 D",
       ptx::Target::sm_100a, [] { return build_sm100a_gemm(Sm100aSpec{}); }},
      {"gemm_amax_sm100a",
       "ops::GemmAmax's sm100a kernel (experimental): TMA, tcgen05 block-scaled MMA into tensor "
       "memory, 4 stages; MXFP8 256x256x256 -> bf16",
       ptx::Target::sm_100a, sample_gemm_amax},
  };
  return kAll;
}

}  // namespace warpforge::ops
