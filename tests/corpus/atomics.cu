// Global and shared atomics of several widths and kinds, a histogram with a
// shared initialized table, and a global counter.
#include <cstdint>

__device__ unsigned long long g_counter = 0;
__device__ int g_table[8] = {1, -2, 3, -4, 0x7fffffff, 6, 7, 010};
__constant__ float c_weights[4] = {0.5f, -1.25f, 3.0e-8f, 1.0e30f};
__constant__ double c_scale = 2.5;

__global__ void histogram(const uint8_t* data, int n, unsigned* bins, float* fsum, double* dsum) {
  __shared__ unsigned local_bins[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) local_bins[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local_bins[data[i]], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    atomicAdd(&bins[i], local_bins[i]);
    atomicMax(reinterpret_cast<int*>(&bins[256]), static_cast<int>(local_bins[i]) + g_table[i % 8]);
  }
  if (threadIdx.x == 0) {
    atomicAdd(&g_counter, 1ull);
    atomicAdd(fsum, c_weights[blockIdx.x % 4]);
    atomicAdd(dsum, c_scale);
    unsigned old = atomicCAS(&bins[257], 0u, 1u);
    atomicExch(&bins[258], old);
    atomicInc(&bins[259], 100u);
    atomicAnd(&bins[260], 0xF0F0u);
    atomicOr(&bins[261], 0x1u);
    atomicXor(&bins[262], 0xFFu);
  }
}

// Pointers initialized with addresses: nvcc writes `generic(sym)+offset`.
__device__ int* g_entry = &g_table[2];
__device__ int* g_entries[2] = {&g_table[1], g_table};

__global__ void follow(int* out) { *out = *g_entry + *g_entries[1]; }
