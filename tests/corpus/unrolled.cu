// A large fully unrolled loop over a constant table: thousands of
// instructions with immediates of every width.
#include <cstdint>

__constant__ uint32_t c_keys[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

__device__ __forceinline__ uint32_t rotr(uint32_t x, int n) { return __funnelshift_r(x, x, n); }

__global__ void mix_rounds(const uint32_t* in, uint32_t* out, double* dout) {
  uint32_t w[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) w[i] = in[blockIdx.x * 16 + i];
  uint32_t a = 0x6a09e667, b = 0xbb67ae85, c = 0x3c6ef372, d = 0xa54ff53a;
  double acc = 0.0;
#pragma unroll
  for (int i = 0; i < 64; ++i) {
    uint32_t s = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t t = s + ((a & b) ^ (a & c) ^ (b & c)) + c_keys[i] + w[i % 16];
    w[i % 16] += rotr(w[(i + 1) % 16], 7) ^ (w[(i + 14) % 16] >> 10);
    d = c;
    c = b;
    b = a;
    a = t;
    acc = acc * 1.0000001 + static_cast<double>(t) * -3.5e-10;
  }
  out[blockIdx.x * 4 + 0] = a;
  out[blockIdx.x * 4 + 1] = b;
  out[blockIdx.x * 4 + 2] = c;
  out[blockIdx.x * 4 + 3] = d;
  dout[blockIdx.x] = acc;
}
