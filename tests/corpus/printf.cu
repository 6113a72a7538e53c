// Device printf: a vprintf call through a local argument buffer and global
// string constants.
#include <cstdio>

__global__ void report(const int* values, double scale) {
  int v = values[threadIdx.x];
  if (v < 0) printf("thread %d of block %d: negative %d\n", threadIdx.x, blockIdx.x, v);
  else printf("value %f, \"quoted\" and tab\t%lld\n", v * scale, static_cast<long long>(v));
}
