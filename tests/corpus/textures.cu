// Texture and surface objects: tex.2d and sust/suld through bindless handles,
// with 16-bit half loads.
#include <cuda_fp16.h>

__global__ void sample(cudaTextureObject_t tex, cudaSurfaceObject_t surf, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float4 t = tex2D<float4>(tex, x + 0.5f, y + 0.5f);
  float l = tex1Dfetch<float>(tex, x);
  float2 s = surf2Dread<float2>(surf, x * 8, y);
  surf2Dwrite(make_float2(t.x + s.x, t.y * s.y), surf, x * 8, y);
  __half hv = __float2half(t.z);
  out[y * w + x] = __half2float(__hmul(hv, hv)) + t.w + l;
}
