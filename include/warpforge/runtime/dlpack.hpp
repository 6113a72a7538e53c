// DLPack exchange (dlpack.h v0.6, the Debian libdlpack-dev header, unversioned
// DLManagedTensor ABI). CUDA tensors are kDLCUDA with the device ordinal; the
// simulator's are kDLExtDev.
//
// DLPack 0.6 has codes for f16/f32/f64 (kDLFloat), bf16 (kDLBfloat) and the
// integers, but none for the MX low-precision types. Those are exchanged with
// the codes DLPack 1.1 added to the same one-byte field (the struct layout is
// unchanged; PyTorch exports float8_e4m3fn with code 10 in the same way): e4m3 = kDLFloat8_e4m3fn (10),
// e5m2 = kDLFloat8_e5m2 (12), e8m0 = kDLFloat8_e8m0fnu (14), e2m1 =
// kDLFloat4_e2m1fn (17, bits 4, shape counting 4-bit elements). A consumer
// that only knows 0.6 refuses them. DLPack 0.6 also lacks a boolean code,
// which warpforge has no dtype for either.
#pragma once

#include <dlpack/dlpack.h>

#include "warpforge/runtime/tensor.hpp"

namespace warpforge::runtime {

DLDataType to_dlpack(DType dtype);
// Throws RuntimeError for a code/bits/lanes warpforge has no dtype for.
DType dtype_from_dlpack(DLDataType type);
DLDevice dlpack_device(const Device& device);

// A DLManagedTensor sharing the tensor's memory; it keeps the storage alive
// until its deleter is called. Strides are always written.
DLManagedTensor* to_dlpack(const Tensor& tensor);

// Takes ownership of `managed` (its deleter runs when the last Tensor using it
// goes away, or at once when the import is refused). Its device must be
// `device`'s DLPack device, or the host (kDLCPU) when `device` is the
// simulator: the host memory is then mapped into the simulator's address
// space (DeviceBackend::map_host), not copied, so kernels read and write the
// producer's array. Null strides mean contiguous row-major.
Tensor from_dlpack(DLManagedTensor* managed, const Device& device);
// As above, for a kDLCUDA tensor: the device is Device::cuda(device_id).
Tensor from_dlpack(DLManagedTensor* managed);

}  // namespace warpforge::runtime
