#include "warpforge/ops/kernel_samples.hpp"

#include "gemm/sm100a_kernel.hpp"
#include "gemm_amax/sm100a_gemm_amax_kernel.hpp"
#include "gemm_amax/swapped_gemm_amax_kernel.hpp"

namespace warpforge::ops {
namespace {

// MXFP8 (e4m3 codes, e8m0 scales per 32), m x 8192 x 8192, k-major A and
// B, n-major bf16 C.
GemmAmaxProblem sample_mxfp8(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmAmaxProblem p;
  p.m = m, p.n = n, p.k = k;
  p.ab_dtype = runtime::DType::e4m3;
  p.sf_dtype = runtime::DType::e8m0;
  p.c_dtype = runtime::DType::bf16;
  p.a = {k, 1, m * k}, p.b = {k, 1, n * k}, p.c = {n, 1, m * n};
  return p;
}

// 256 x 256 x 256: the TMA pipeline of 4 stages, on one CTA a tile or on CTA pairs.
ptx::Module sample_gemm_amax(bool pair) {
  return build_sm100a_gemm_amax(sample_mxfp8(256, 256, 256), 4, pair);
}

}  // namespace

const std::vector<KernelSample>& kernel_samples() {
  static const std::vector<KernelSample> kAll = {
      {"gemm_sm100a",
       "ops::Gemm's sm100a kernel (experimental): TMA, tcgen05.mma kind::f16 into tensor memory, "
       "4 stages; bf16 row-major A, column-major B, f32 D",
       ptx::Target::sm_100a, [] { return build_sm100a_gemm(Sm100aSpec{}); }},
      {"gemm_sm100a_pair",
       "ops::Gemm's sm100a kernel (experimental) over CTA pairs: clusters of 2, tcgen05.mma "
       ".cta_group::2 with M = 256 a pair, 4 stages; bf16 row-major A, column-major B, f32 D",
       ptx::Target::sm_100a, [] { return build_sm100a_gemm(Sm100aSpec{.pair = true}); }},
      {"gemm_amax_sm100a",
       "ops::GemmAmax's sm100a kernel (experimental): TMA, tcgen05 block-scaled MMA into tensor "
       "memory, 4 stages; MXFP8 256x256x256 -> bf16",
       ptx::Target::sm_100a, [] { return sample_gemm_amax(false); }},
      {"gemm_amax_sm100a_pair",
       "ops::GemmAmax's sm100a kernel (experimental) over CTA pairs, as automatic builds it for "
       "this problem: clusters of 2, tcgen05 block-scaled MMA .cta_group::2 with M = 256 a pair, "
       "4 stages; MXFP8 256x256x256 -> bf16",
       ptx::Target::sm_100a, [] { return sample_gemm_amax(true); }},
      {"gemm_amax_swapped",
       "ops::GemmAmax's swapped kernel as automatic selection builds it for MXFP8 128x8192x8192 -> "
       "bf16 on an H100: 128 tokens x 128 rows of B a CTA, a producer warpgroup, K split in two, "
       "8 stages",
       ptx::Target::sm_90a,
       [] {
         return build_swapped_gemm_amax(sample_mxfp8(128, 8192, 8192),
                                        {.tokens = 128, .stages = 8, .splits = 2});
       }},
  };
  return kAll;
}

}  // namespace warpforge::ops
