// Ampere tensor-core path: cp.async into shared memory, ldmatrix, and one
// mma.sync.m16n8k16 bf16 atom, all as inline PTX (PTX ISA 9.7.14, 9.7.9.25).
#include <cstdint>

__global__ void __launch_bounds__(32) mma_bf16_tile(const uint16_t* __restrict__ a,
                                                    const uint16_t* __restrict__ b, float* d) {
  __shared__ __align__(16) uint16_t sa[16 * 16];
  __shared__ __align__(16) uint16_t sb[8 * 16];
  const int lane = threadIdx.x;
  for (int i = lane; i < 16 * 16 / 8; i += 32) {
    uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(&sa[i * 8]));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(a + i * 8));
  }
  if (lane < 16) {
    uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(&sb[lane * 8]));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(b + lane * 8));
  }
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();

  uint32_t ra[4], rb[2];
  uint32_t pa = static_cast<uint32_t>(__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3])
               : "r"(pa));
  uint32_t pb = static_cast<uint32_t>(__cvta_generic_to_shared(&sb[(lane % 8) * 16 + ((lane / 8) % 2) * 8]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(rb[0]), "=r"(rb[1])
               : "r"(pb));
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  const int row = lane / 4, col = 2 * (lane % 4);
  d[row * 8 + col] = c[0];
  d[row * 8 + col + 1] = c[1];
  d[(row + 8) * 8 + col] = c[2];
  d[(row + 8) * 8 + col + 1] = c[3];
}
