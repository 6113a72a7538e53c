// Warp shuffles, votes and __reduce_add_sync, and in the same module a
// texture read, which the simulator refuses for that kernel alone
// (tests/sim/nvcc_kernels_test.cpp).
__global__ void warp_ops(const int* in, int* out) {
  const unsigned all = 0xFFFFFFFFu;
  const int v = in[threadIdx.x];
  int* o = out + 6 * threadIdx.x;
  o[0] = __shfl_down_sync(all, v, 3);
  o[1] = __shfl_xor_sync(all, v, 5);
  o[2] = __shfl_sync(all, v, (threadIdx.x * 7) & 31);
  o[3] = static_cast<int>(__ballot_sync(all, v > 0));
  o[4] = __reduce_add_sync(all, v);
  o[5] = __any_sync(all, v == 42) + 2 * __all_sync(all, v != 0);
}

__global__ void texture_read(cudaTextureObject_t tex, float* out) {
  out[threadIdx.x] = tex1Dfetch<float>(tex, static_cast<int>(threadIdx.x));
}
