// libcu++'s cuda::ptx wrappers (one function per PTX instruction) for sm_90a:
// an mbarrier initialised and fenced for the cluster, a bulk copy from global
// to shared memory that completes on it, the parity wait loop, the async proxy
// fence and a bulk copy back with its commit and wait groups.
#include <cuda/ptx>

#include <cstdint>

namespace ptx = cuda::ptx;

__global__ void bulk_copy_scale(const float* in, float* out, float scale) {
  constexpr std::uint32_t kElements = 256;
  __shared__ alignas(128) float tile[kElements];
  __shared__ std::uint64_t bar;
  const float* src = in + blockIdx.x * kElements;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar,
                                   sizeof(tile));
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, tile, src, sizeof(tile), &bar);
  }
  __syncthreads();
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  for (std::uint32_t i = threadIdx.x; i < kElements; i += blockDim.x) tile[i] *= scale;
  ptx::fence_proxy_async(ptx::space_shared);
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out + blockIdx.x * kElements, tile,
                       sizeof(tile));
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}
