// A managed variable (.attribute(.managed)), a switch, bf16 arithmetic and
// warp intrinsics (redux.sync, activemask, nanosleep, trap).
#include <cuda_bf16.h>

__managed__ int m_count;

__device__ int pick(int x, const int* p) {
  switch (x) {
    case 0: return p[1];
    case 1: return p[7] * 3;
    case 2: return p[3] ^ 5;
    case 3: return p[9] + 2;
    case 4: return 11;
    case 5: return p[2] - 4;
    default: return -1;
  }
}

__global__ void intrinsics(int* p, __nv_bfloat16* h, int n) {
  int v = pick(threadIdx.x % 8, p);
  if (v == 99) __trap();
  h[threadIdx.x] = __hadd(h[threadIdx.x], __float2bfloat16(1.5f));
  atomicAdd(&m_count, v);
  __nanosleep(100);
  p[n] = __activemask() + __reduce_add_sync(0xffffffff, v);
}
