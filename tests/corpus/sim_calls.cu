// Device function calls as nvcc writes them, run by the simulator's tests
// (tests/sim/nvcc_kernels_test.cpp): struct, scalar and pointer parameters,
// a struct return value, recursion nvcc keeps (two calls a level), and fp8
// conversions inside a function that stays a call.
#include <cuda_fp16.h>
#include <cuda_fp8.h>

struct Pair {
  float x, y;
};

__device__ __noinline__ Pair rotate(Pair p, float c, float s) {
  return {c * p.x - s * p.y, s * p.x + c * p.y};
}
__device__ __noinline__ float dot(Pair a, Pair b) {
  return a.x * b.x + a.y * b.y;
}
__device__ __noinline__ void store_pair(float* dst, Pair p) {
  dst[0] = p.x;
  dst[1] = p.y;
}
__device__ __noinline__ int fib(int n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__global__ void calls(const Pair* in, float* out, int* fibs, int period) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const Pair r = rotate(in[i], 0.8f, 0.6f);
  store_pair(out + 3 * i, r);
  out[3 * i + 2] = dot(r, in[i]);
  fibs[i] = fib(i % period);
}

// fib(n) nests n calls deep.
__global__ void deep_fib(int* out, int n) {
  out[threadIdx.x] = fib(n);
}

// The pair as e4m3 (low half) and e5m2 (high half) codes, saturating.
__device__ __noinline__ unsigned fp8_codes(float2 v) {
  const unsigned e4 = __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E4M3);
  const unsigned e5 = __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E5M2);
  return e4 | e5 << 16;
}

__global__ void fp8_convert(const float2* in, unsigned* codes, float2* e4m3_values) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned c = fp8_codes(in[i]);
  codes[i] = c;
  const __half2_raw h =
      __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(c & 0xFFFFu), __NV_E4M3);
  e4m3_values[i] = __half22float2(__half2(h));
}
