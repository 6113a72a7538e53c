// The C++ wmma API in the other floating-point forms nvcc lowers to
// wmma.load/mma/store PTX: bf16 m32n8k16 (B row-major, D stored
// column-major), tf32 m16n16k8 (A and B column-major) and f16 m8n32k16 with
// f16 accumulators. One warp, one tile each; C is loaded from d and D
// overwrites it (tests/sim/nvcc_kernel_runs.hpp, run_wmma_forms).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

// a 32x16 row-major, b 16x8 row-major, c 32x8 row-major; out 32x8 column-major.
__global__ void wmma_bf16_m32n8k16(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* c,
                                   float* out) {
  wmma::fragment<wmma::matrix_a, 32, 8, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 32, 8, 16, float> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 8);
  wmma::load_matrix_sync(acc, c, 8, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(out, acc, 32, wmma::mem_col_major);
}

// a 16x8 column-major, b 8x16 column-major (f32, rounded to tf32 here);
// out 16x16 row-major, from zero.
__global__ void wmma_tf32_m16n16k8(const float* a, const float* b, float* out) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 8);
  for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
  for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}

// a 8x16 row-major, b 16x32 column-major, c and out 8x32 row-major (f16).
__global__ void wmma_f16_m8n32k16(const half* a, const half* b, const half* c, half* out) {
  wmma::fragment<wmma::matrix_a, 8, 32, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 32, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 32, 16, half> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(acc, c, 32, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(out, acc, 32, wmma::mem_row_major);
}
