// CUB's device-wide radix sort of 32-bit keys: nvcc instantiates the onesweep
// kernels, whose inline assembly from CUDA's headers declares `%p1` in blocks
// that hide the function's own %p registers (issue 25).
#include <cub/device/device_radix_sort.cuh>

cudaError_t sort_keys(void* temp, size_t& temp_bytes, const unsigned* in, unsigned* out, int n,
                      cudaStream_t stream) {
  return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, n, 0, 32, stream);
}
