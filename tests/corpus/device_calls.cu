// Device functions that stay calls (noinline), with scalar, struct and
// pointer parameters and return values; an extern function under -rdc.
struct Pair {
  float x, y;
};

__device__ __noinline__ float dot(Pair a, Pair b) { return a.x * b.x + a.y * b.y; }

__device__ __noinline__ Pair rotate(Pair p, float c, float s) { return {c * p.x - s * p.y, s * p.x + c * p.y}; }

__device__ __noinline__ void store_twice(float* dst, float v) {
  dst[0] = v;
  dst[1] = v * 2.f;
}

__device__ __noinline__ int recurse(int n) { return n <= 1 ? 1 : n * recurse(n - 1); }

__device__ __noinline__ float twice(float x) { return 2.f * x; }
__device__ __noinline__ float square(float x) { return x * x; }
__device__ float (*const g_ops[2])(float) = {twice, square};

#ifdef __CUDACC_RDC__
extern __device__ float external_scale(float);
#endif

__global__ void calls(const Pair* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Pair r = rotate(in[i], 0.8f, 0.6f);
  float v = dot(r, in[i]) + static_cast<float>(recurse(i % 6));
#ifdef __CUDACC_RDC__
  v = external_scale(v);
#endif
  v = g_ops[i & 1](v);  // an indirect call through a .callprototype
  store_twice(out + 2 * i, v);
}
