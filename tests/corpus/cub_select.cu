// CUB's device-wide stream compaction: keeps the positive integers, writing
// them in order and their count (the select/partition look-back kernel).
#include <cub/device/device_select.cuh>

struct Positive {
  __host__ __device__ bool operator()(int x) const { return x > 0; }
};

cudaError_t keep_positive(void* temp, size_t& temp_bytes, const int* in, int* out, int* count,
                          int n, cudaStream_t stream) {
  return cub::DeviceSelect::If(temp, temp_bytes, in, out, count, n, Positive{}, stream);
}
