// Hopper (sm_90a) path as inline PTX: a TMA tile load completing on an
// mbarrier, a cluster barrier, fence.proxy.async and one wgmma
// m64n8k16 (PTX ISA 9.7.9.25, 9.7.13.15, 9.7.15).
#include <cstdint>

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    wgmma_tile(const __grid_constant__ uint64_t tmap[16], float* out, uint64_t desc_a, uint64_t desc_b) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t bar_addr = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  const uint32_t smem_addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar_addr), "r"(1));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::);
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar_addr), "r"(4096));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
        "[%4];\n" ::"r"(smem_addr),
        "l"(tmap), "r"(0), "r"(static_cast<int>(blockIdx.x) * 64), "r"(bar_addr)
        : "memory");
  }
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_loop:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_loop;\n"
      "}\n" ::"r"(bar_addr),
      "r"(0));
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  asm volatile("wgmma.fence.sync.aligned;\n" ::);
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "l"(desc_a), "l"(desc_b));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::);
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::);
  uint32_t rank;
  asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  for (int i = 0; i < 4; ++i) out[(rank * 128 + threadIdx.x) * 4 + i] = d[i];
}
