// The CUDA driver, loaded at first use with dlopen("libcuda.so.1") so that
// warpforge has no link-time dependency on libcuda or cudart, and runs its CPU
// paths on machines without either.
#pragma once

#include <concepts>
#include <string>

#include "driver_api.hpp"
#include "warpforge/error.hpp"

namespace warpforge::runtime::cuda {

// The resolved entry points. Each member is named like the API function; where
// cuda.h maps that name to a versioned symbol (cuMemAlloc -> cuMemAlloc_v2),
// the versioned symbol is the one resolved.
struct Driver {
  PFN_cuGetErrorName cuGetErrorName;
  PFN_cuGetErrorString cuGetErrorString;
  PFN_cuInit cuInit;
  PFN_cuDriverGetVersion cuDriverGetVersion;
  PFN_cuDeviceGetCount cuDeviceGetCount;
  PFN_cuDeviceGet cuDeviceGet;
  PFN_cuDeviceGetName cuDeviceGetName;
  PFN_cuDeviceGetAttribute cuDeviceGetAttribute;
  PFN_cuDeviceTotalMem_v2 cuDeviceTotalMem;
  PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain;
  PFN_cuDevicePrimaryCtxRelease_v2 cuDevicePrimaryCtxRelease;
  PFN_cuCtxSetCurrent cuCtxSetCurrent;
  PFN_cuCtxGetCurrent cuCtxGetCurrent;
  PFN_cuCtxSynchronize cuCtxSynchronize;
  PFN_cuMemGetInfo_v2 cuMemGetInfo;
  PFN_cuMemAlloc_v2 cuMemAlloc;
  PFN_cuMemFree_v2 cuMemFree;
  PFN_cuMemcpyHtoD_v2 cuMemcpyHtoD;
  PFN_cuMemcpyDtoH_v2 cuMemcpyDtoH;
  PFN_cuMemcpyDtoD_v2 cuMemcpyDtoD;
  PFN_cuMemcpyHtoDAsync_v2 cuMemcpyHtoDAsync;
  PFN_cuMemcpyDtoHAsync_v2 cuMemcpyDtoHAsync;
  PFN_cuMemcpyDtoDAsync_v2 cuMemcpyDtoDAsync;
  PFN_cuMemsetD8_v2 cuMemsetD8;
  PFN_cuMemsetD8Async cuMemsetD8Async;
  PFN_cuStreamCreate cuStreamCreate;
  PFN_cuStreamDestroy_v2 cuStreamDestroy;
  PFN_cuStreamSynchronize cuStreamSynchronize;
  PFN_cuEventCreate cuEventCreate;
  PFN_cuEventRecord cuEventRecord;
  PFN_cuEventSynchronize cuEventSynchronize;
  PFN_cuEventElapsedTime cuEventElapsedTime;  // _v2 (CUDA 12.8+) where exported
  PFN_cuEventDestroy_v2 cuEventDestroy;
  PFN_cuModuleLoadDataEx cuModuleLoadDataEx;
  PFN_cuModuleUnload cuModuleUnload;
  PFN_cuModuleGetFunction cuModuleGetFunction;
  PFN_cuLinkCreate_v2 cuLinkCreate;
  PFN_cuLinkAddData_v2 cuLinkAddData;
  PFN_cuLinkComplete cuLinkComplete;
  PFN_cuLinkDestroy cuLinkDestroy;
  PFN_cuFuncGetAttribute cuFuncGetAttribute;
  PFN_cuFuncSetAttribute cuFuncSetAttribute;
  PFN_cuLaunchKernel cuLaunchKernel;
  PFN_cuLaunchKernelEx cuLaunchKernelEx;
  // Resolved when exported (CUDA 12.0+ drivers), else null: only TMA needs it,
  // and CudaBackend::encode_tensor_map says so when it is missing.
  PFN_cuTensorMapEncodeTiled cuTensorMapEncodeTiled;
  // Likewise (CUDA 11.8+); CudaBackend::max_active_clusters says when missing.
  PFN_cuOccupancyMaxActiveClusters cuOccupancyMaxActiveClusters;

  int version = 0;  // cuDriverGetVersion: 1000 * major + 10 * minor
};

// The driver, loaded and initialized (cuInit(0)) on the first call. Throws
// CudaError when libcuda.so.1 cannot be opened, lacks an entry point, or
// cuInit fails; the message says that Device::cuda needs an NVIDIA driver.
const Driver& driver();

// Whether driver() would succeed; never throws.
bool driver_available();

// The error for a failed call: `call` names it with its arguments, `detail`
// is appended to the driver's description of the error.
CudaError cuda_error(CUresult result, std::string call, const std::string& detail = "");
[[noreturn]] void throw_cuda_error(CUresult result, const std::string& call);

inline void check(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) throw_cuda_error(result, call);
}

// As above, building the description of the call only when it failed (the
// launch path calls this for every kernel launch).
template <class Describe>
  requires std::invocable<Describe>
inline void check(CUresult result, Describe&& describe) {
  if (result != CUDA_SUCCESS) throw_cuda_error(result, describe());
}

}  // namespace warpforge::runtime::cuda
