// The C++ wmma API, which nvcc lowers to wmma.load/mma/store PTX.
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

__global__ void wmma_f16_gemm(const half* a, const half* b, float* c, int n, int k) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  const int tile_m = blockIdx.y * 16, tile_n = blockIdx.x * 16;
  for (int kk = 0; kk < k; kk += 16) {
    wmma::load_matrix_sync(fa, a + tile_m * k + kk, k);
    wmma::load_matrix_sync(fb, b + tile_n * k + kk, k);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  for (int i = 0; i < acc.num_elements; ++i) acc.x[i] *= 0.5f;
  wmma::store_matrix_sync(c + tile_m * n + tile_n, acc, n, wmma::mem_row_major);
}
