// CUB's device-wide histogram of byte samples into 64 even bins: shared-memory
// privatised bins with atomics, then a sweep that adds them to global memory.
#include <cub/device/device_histogram.cuh>

cudaError_t byte_histogram(void* temp, size_t& temp_bytes, const unsigned char* samples, int* bins,
                           int n, cudaStream_t stream) {
  return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, samples, bins, 65, 0, 256, n,
                                             stream);
}
