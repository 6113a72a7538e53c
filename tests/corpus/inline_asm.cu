// Inline PTX in CUDA C++: each asm statement is a `{ }` block of its own in
// nvcc's output, with registers and labels local to it. The loop below is
// inlined twice, so its labels `loop` and `done` appear in sibling blocks (as
// Triton's `waitLoop` does); __syncthreads_or's block (CUDA's headers, as CUB's
// radix sort uses it) and the last asm block declare a %p1 that hides nvcc's;
// and the offsets are constant expressions, which nvcc passes through unfolded.
__device__ unsigned twice_count(unsigned n) {
  unsigned out;
  asm volatile(
      "{\n\t.reg .pred p;\n\t.reg .u32 c;\n\tmov.u32 c, %1;\n\tmov.u32 %0, 0;\n"
      "loop:\n\tsetp.eq.u32 p, c, 0;\n\t@p bra done;\n\tsub.u32 c, c, 1;\n\tadd.u32 %0, %0, 2;\n\tbra loop;\n"
      "done:\n\t}"
      : "=r"(out)
      : "r"(n));
  return out;
}

__global__ void inline_asm(unsigned* out, const unsigned* in) {
  __shared__ unsigned tile[256];
  unsigned t = threadIdx.x;
  unsigned a = twice_count(in[t]);
  unsigned b = twice_count(in[t] + 3);
  tile[t] = a + b;
  const int any_large = __syncthreads_or(a > 64);
  unsigned low, shifted, base = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  asm("{\n\t.reg .pred %%p1;\n\tsetp.lt.u32 %%p1, %1, 16;\n\tselp.u32 %0, 1, 0, %%p1;\n\t}" : "=r"(low) : "r"(t));
  asm volatile("ld.shared.u32 %0, [%1+4*2];\n\tor.b32 %0, %0, ((128 >> 4) << 16);" : "=r"(shifted) : "r"(base));
  out[t] = a + b + low + shifted + (t < 4 ? 1 : 0) + any_large;
}
