#include "driver.hpp"

#include <dlfcn.h>

#include <memory>
#include <utility>

#include "warpforge/error.hpp"

namespace warpforge::runtime::cuda {
namespace {

constexpr const char* kLibrary = "libcuda.so.1";

CudaError describe(const Driver& d, CUresult result, std::string call, const std::string& hint = "") {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (d.cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  return CudaError(std::move(call), result, name ? name : "CUDA error " + std::to_string(result),
                   (text ? text : "no description from cuGetErrorString") + hint);
}

struct LoadResult {
  std::unique_ptr<Driver> driver;
  std::unique_ptr<CudaError> error;  // set when driver is not
};

template <class Fn>
void resolve(void* library, const char* symbol, Fn& out) {
  void* address = dlsym(library, symbol);
  if (!address) {
    throw CudaError(std::string("dlsym(") + kLibrary + ", " + symbol + ")", -1, "CUDA driver too old",
                    std::string("the driver does not export ") + symbol +
                        "; warpforge needs a CUDA 12 or newer driver");
  }
  out = reinterpret_cast<Fn>(address);
}

// cuEventElapsedTime_v2 appeared in CUDA 12.8; older drivers only have the
// unversioned symbol, with the same signature.
template <class Fn>
void resolve_newest(void* library, const char* versioned, const char* plain, Fn& out) {
  if (void* address = dlsym(library, versioned)) {
    out = reinterpret_cast<Fn>(address);
    return;
  }
  resolve(library, plain, out);
}

std::unique_ptr<Driver> load() {
  // The library stays loaded for the life of the process: driver objects
  // (contexts, modules) may outlive any scope we could close it in.
  void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    throw CudaError(std::string("dlopen(") + kLibrary + ")", -1, "no CUDA driver",
                    std::string(why ? why : "not found") +
                        "; Device::cuda needs an NVIDIA GPU with its driver installed");
  }
  auto d = std::make_unique<Driver>();
  resolve(library, "cuGetErrorName", d->cuGetErrorName);
  resolve(library, "cuGetErrorString", d->cuGetErrorString);
  resolve(library, "cuInit", d->cuInit);
  resolve(library, "cuDriverGetVersion", d->cuDriverGetVersion);
  resolve(library, "cuDeviceGetCount", d->cuDeviceGetCount);
  resolve(library, "cuDeviceGet", d->cuDeviceGet);
  resolve(library, "cuDeviceGetName", d->cuDeviceGetName);
  resolve(library, "cuDeviceGetAttribute", d->cuDeviceGetAttribute);
  resolve(library, "cuDeviceTotalMem_v2", d->cuDeviceTotalMem);
  resolve(library, "cuDevicePrimaryCtxRetain", d->cuDevicePrimaryCtxRetain);
  resolve(library, "cuDevicePrimaryCtxRelease_v2", d->cuDevicePrimaryCtxRelease);
  resolve(library, "cuCtxSetCurrent", d->cuCtxSetCurrent);
  resolve(library, "cuCtxGetCurrent", d->cuCtxGetCurrent);
  resolve(library, "cuCtxSynchronize", d->cuCtxSynchronize);
  resolve(library, "cuMemGetInfo_v2", d->cuMemGetInfo);
  resolve(library, "cuMemAlloc_v2", d->cuMemAlloc);
  resolve(library, "cuMemFree_v2", d->cuMemFree);
  resolve(library, "cuMemcpyHtoD_v2", d->cuMemcpyHtoD);
  resolve(library, "cuMemcpyDtoH_v2", d->cuMemcpyDtoH);
  resolve(library, "cuMemcpyDtoD_v2", d->cuMemcpyDtoD);
  resolve(library, "cuMemcpyHtoDAsync_v2", d->cuMemcpyHtoDAsync);
  resolve(library, "cuMemcpyDtoHAsync_v2", d->cuMemcpyDtoHAsync);
  resolve(library, "cuMemcpyDtoDAsync_v2", d->cuMemcpyDtoDAsync);
  resolve(library, "cuMemsetD8_v2", d->cuMemsetD8);
  resolve(library, "cuMemsetD8Async", d->cuMemsetD8Async);
  resolve(library, "cuStreamCreate", d->cuStreamCreate);
  resolve(library, "cuStreamDestroy_v2", d->cuStreamDestroy);
  resolve(library, "cuStreamSynchronize", d->cuStreamSynchronize);
  resolve(library, "cuEventCreate", d->cuEventCreate);
  resolve(library, "cuEventRecord", d->cuEventRecord);
  resolve(library, "cuEventSynchronize", d->cuEventSynchronize);
  resolve_newest(library, "cuEventElapsedTime_v2", "cuEventElapsedTime", d->cuEventElapsedTime);
  resolve(library, "cuEventDestroy_v2", d->cuEventDestroy);
  resolve(library, "cuModuleLoadDataEx", d->cuModuleLoadDataEx);
  resolve(library, "cuModuleUnload", d->cuModuleUnload);
  resolve(library, "cuModuleGetFunction", d->cuModuleGetFunction);
  resolve(library, "cuLinkCreate_v2", d->cuLinkCreate);
  resolve(library, "cuLinkAddData_v2", d->cuLinkAddData);
  resolve(library, "cuLinkComplete", d->cuLinkComplete);
  resolve(library, "cuLinkDestroy", d->cuLinkDestroy);
  resolve(library, "cuFuncGetAttribute", d->cuFuncGetAttribute);
  resolve(library, "cuFuncSetAttribute", d->cuFuncSetAttribute);
  resolve(library, "cuLaunchKernel", d->cuLaunchKernel);
  resolve(library, "cuLaunchKernelEx", d->cuLaunchKernelEx);
  d->cuTensorMapEncodeTiled =
      reinterpret_cast<PFN_cuTensorMapEncodeTiled>(dlsym(library, "cuTensorMapEncodeTiled"));
  d->cuOccupancyMaxActiveClusters =
      reinterpret_cast<PFN_cuOccupancyMaxActiveClusters>(dlsym(library, "cuOccupancyMaxActiveClusters"));

  if (CUresult r = d->cuInit(0); r != CUDA_SUCCESS)
    throw describe(*d, r, "cuInit(0)", "; Device::cuda needs an NVIDIA GPU the driver can use");
  if (CUresult r = d->cuDriverGetVersion(&d->version); r != CUDA_SUCCESS)
    throw describe(*d, r, "cuDriverGetVersion");
  return d;
}

const LoadResult& loaded() {
  static const LoadResult result = [] {
    LoadResult r;
    try {
      r.driver = load();
    } catch (const CudaError& e) {
      r.error = std::make_unique<CudaError>(e);
    }
    return r;
  }();
  return result;
}

}  // namespace

const Driver& driver() {
  const LoadResult& r = loaded();
  if (!r.driver) throw *r.error;
  return *r.driver;
}

bool driver_available() { return loaded().driver != nullptr; }

CudaError cuda_error(CUresult result, std::string call, const std::string& detail) {
  return describe(driver(), result, std::move(call), detail);
}

void throw_cuda_error(CUresult result, const std::string& call) { throw cuda_error(result, call); }

}  // namespace warpforge::runtime::cuda
