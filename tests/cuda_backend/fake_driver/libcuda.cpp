// A stand-in for libcuda.so.1, built for the cuda_backend tests only: device
// memory is host memory, the "JIT" wraps the PTX text in a fake cubin, and
// launches are recorded rather than run. It lets the CUDA backend's driver
// calls (dlopen binding, error naming, JIT logs, launch parameters, cluster
// attributes, the dynamic shared memory opt-in) be tested without a GPU.
// Signatures are the runtime's own declarations of the Driver API.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "../fake_driver_state.hpp"
#include "runtime/cuda/driver_api.hpp"

using namespace warpforge::runtime::cuda;
using warpforge::runtime::fake_driver::State;

namespace {

State state;
int context_token;
// The calling thread's current context, as the real driver keeps it: any
// context may be made current (a test stands in for a framework's with a
// pointer of its own); allocations need the device's own.
thread_local CUcontext current_context = nullptr;
bool in_device_context() { return current_context == reinterpret_cast<CUcontext>(&context_token); }
constexpr CUresult kInvalidValue = 1, kOutOfMemory = 2, kInvalidContext = 201, kInvalidPtx = 218,
                   kNotFound = 500;
constexpr const char kCubinMagic[] = "FAKECUBIN:";

struct Function {
  std::string name;
  int max_dynamic_shared = 48 * 1024;
};
struct Module {
  std::map<std::string, Function> functions;
};
struct Link {
  char* error_log = nullptr;
  std::size_t error_log_size = 0;
  std::string ptx;
  std::string cubin;
};
struct Event {
  std::chrono::steady_clock::time_point when;
};

void record_launch(CUfunction f, std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                   std::array<unsigned, 3> cluster, bool overlap, bool ex, unsigned shared, CUstream stream,
                   void** params) {
  warpforge::runtime::fake_driver::Launch l{
      reinterpret_cast<Function*>(f)->name, grid, block, cluster, overlap, ex, shared, stream, {}};
  for (std::size_t i = 0; i < state.param_sizes.size(); ++i) {
    const auto* p = static_cast<const std::uint8_t*>(params[i]);
    l.params.emplace_back(p, p + state.param_sizes[i]);
  }
  state.launches.push_back(std::move(l));
}

}  // namespace

extern "C" {

State* fake_driver_state() { return &state; }

CUresult cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case kInvalidValue: *s = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
    case kOutOfMemory: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return CUDA_SUCCESS;
    case kInvalidContext: *s = "CUDA_ERROR_INVALID_CONTEXT"; return CUDA_SUCCESS;
    case kInvalidPtx: *s = "CUDA_ERROR_INVALID_PTX"; return CUDA_SUCCESS;
    case kNotFound: *s = "CUDA_ERROR_NOT_FOUND"; return CUDA_SUCCESS;
  }
  return kInvalidValue;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  switch (r) {
    case kInvalidValue: *s = "invalid argument"; return CUDA_SUCCESS;
    case kOutOfMemory: *s = "out of memory"; return CUDA_SUCCESS;
    case kInvalidContext: *s = "invalid device context"; return CUDA_SUCCESS;
    case kInvalidPtx: *s = "a PTX JIT compilation failed"; return CUDA_SUCCESS;
    case kNotFound: *s = "named symbol not found"; return CUDA_SUCCESS;
  }
  return kInvalidValue;
}
CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int* v) { return *v = 13000, CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int* n) { return *n = 1, CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice* d, int ordinal) { return ordinal == 0 ? (*d = 0, CUDA_SUCCESS) : kInvalidValue; }
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "Fake H100", static_cast<std::size_t>(len));
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 228 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 227 * 1024; break;
    default: return kInvalidValue;
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice) { return *bytes = 80ull << 30, CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(&context_token);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) {
  current_context = c;
  ++state.context_switches;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext* c) { return *c = current_context, CUDA_SUCCESS; }
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }

// 70 GiB free of 80: an allocation between 64 and 70 GiB passes the runtime's
// check and fails in cuMemAlloc, one above 70 GiB is refused before it.
CUresult cuMemGetInfo_v2(std::size_t* free, std::size_t* total) {
  *free = 70ull << 30;
  *total = 80ull << 30;
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, std::size_t bytes) {
  if (!in_device_context()) return kInvalidContext;
  if (bytes > (1ull << 36)) return kOutOfMemory;
  *p = reinterpret_cast<CUdeviceptr>(std::malloc(bytes));
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p) { return std::free(reinterpret_cast<void*>(p)), CUDA_SUCCESS; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, std::size_t n) {
  return std::memcpy(reinterpret_cast<void*>(d), s, n), CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, std::size_t n) {
  return std::memcpy(d, reinterpret_cast<void*>(s), n), CUDA_SUCCESS;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, std::size_t n) {
  return std::memmove(reinterpret_cast<void*>(d), reinterpret_cast<void*>(s), n), CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, std::size_t n, CUstream) { return cuMemcpyHtoD_v2(d, s, n); }
CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, std::size_t n, CUstream) { return cuMemcpyDtoH_v2(d, s, n); }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, std::size_t n, CUstream) { return cuMemcpyDtoD_v2(d, s, n); }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, std::size_t n) {
  return std::memset(reinterpret_cast<void*>(d), v, n), CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, std::size_t n, CUstream) { return cuMemsetD8_v2(d, v, n); }

CUresult cuStreamCreate(CUstream* s, unsigned) {
  if (!in_device_context()) return kInvalidContext;
  return *s = reinterpret_cast<CUstream>(new int), CUDA_SUCCESS; }
CUresult cuStreamDestroy_v2(CUstream s) { return delete reinterpret_cast<int*>(s), CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult cuEventCreate(CUevent* e, unsigned) {
  if (!in_device_context()) return kInvalidContext;
  return *e = reinterpret_cast<CUevent>(new Event), CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream) {
  reinterpret_cast<Event*>(e)->when = std::chrono::steady_clock::now();
  return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventElapsedTime_v2(float* ms, CUevent a, CUevent b) {
  *ms = std::chrono::duration<float, std::milli>(reinterpret_cast<Event*>(b)->when - reinterpret_cast<Event*>(a)->when)
            .count();
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent e) { return delete reinterpret_cast<Event*>(e), CUDA_SUCCESS; }

CUresult cuLinkCreate_v2(unsigned n, CUjit_option* options, void** values, CUlinkState* out) {
  if (!in_device_context()) return kInvalidContext;
  auto* link = new Link;
  int target = -1;
  for (unsigned i = 0; i < n; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) link->error_log = static_cast<char*>(values[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      link->error_log_size = reinterpret_cast<std::uintptr_t>(values[i]);
    if (options[i] == CU_JIT_TARGET) target = static_cast<int>(reinterpret_cast<std::uintptr_t>(values[i]));
  }
  ++state.link_creates;
  state.jit_targets.push_back(target);
  *out = reinterpret_cast<CUlinkState>(link);
  return CUDA_SUCCESS;
}
// Refuses PTX holding "add.u16x2" the way ptxas does for a target before sm_90:
// the error log names its line.
CUresult cuLinkAddData_v2(CUlinkState s, CUjitInputType type, void* data, std::size_t size, const char*, unsigned,
                          CUjit_option*, void**) {
  auto* link = reinterpret_cast<Link*>(s);
  if (type != CU_JIT_INPUT_PTX) return kInvalidValue;
  link->ptx.assign(static_cast<const char*>(data), size - 1);
  if (const auto at = link->ptx.find("add.u16x2"); at != std::string::npos) {
    const auto line = 1 + std::count(link->ptx.begin(), link->ptx.begin() + static_cast<long>(at), '\n');
    std::snprintf(link->error_log, link->error_log_size,
                  "ptxas application ptx input, line %ld; error   : Instruction 'add.u16x2' requires .target sm_90 or higher\n"
                  "ptxas fatal   : Ptx assembly aborted due to errors\n",
                  static_cast<long>(line));
    return kInvalidPtx;
  }
  return CUDA_SUCCESS;
}
CUresult cuLinkComplete(CUlinkState s, void** cubin, std::size_t* size) {
  auto* link = reinterpret_cast<Link*>(s);
  link->cubin = kCubinMagic + link->ptx;
  *cubin = link->cubin.data();
  *size = link->cubin.size();
  return CUDA_SUCCESS;
}
CUresult cuLinkDestroy(CUlinkState s) { return delete reinterpret_cast<Link*>(s), CUDA_SUCCESS; }

// A cubin from cuLinkComplete, or PTX text compiled whole (recorded with its
// CU_JIT_TARGET, -1 when absent).
CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned n, CUjit_option* options, void** values) {
  if (!in_device_context()) return kInvalidContext;
  const char* text = static_cast<const char*>(image);
  if (std::strstr(text, ".version") != nullptr && std::strncmp(text, kCubinMagic, std::strlen(kCubinMagic)) != 0) {
    int target = -1;
    for (unsigned i = 0; i < n; ++i)
      if (options[i] == CU_JIT_TARGET) target = static_cast<int>(reinterpret_cast<std::uintptr_t>(values[i]));
    state.whole_program_targets.push_back(target);
  } else if (std::strncmp(text, kCubinMagic, std::strlen(kCubinMagic)) != 0) {
    return kInvalidPtx;
  }
  ++state.module_loads;
  *m = reinterpret_cast<CUmodule>(new Module);
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) { return delete reinterpret_cast<Module*>(m), CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  Function& fn = reinterpret_cast<Module*>(m)->functions[name];
  fn.name = name;
  *f = reinterpret_cast<CUfunction>(&fn);
  return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction f) {
  if (a == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) return *v = 0, CUDA_SUCCESS;
  if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    return *v = reinterpret_cast<Function*>(f)->max_dynamic_shared, CUDA_SUCCESS;
  return kInvalidValue;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return kInvalidValue;
  auto* fn = reinterpret_cast<Function*>(f);
  fn->max_dynamic_shared = v;
  state.dynamic_shared_sets.emplace_back(fn->name, v);
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream stream, void** params, void**) {
  if (!in_device_context()) return kInvalidContext;
  if (shared > static_cast<unsigned>(reinterpret_cast<Function*>(f)->max_dynamic_shared)) return kInvalidValue;
  record_launch(f, {gx, gy, gz}, {bx, by, bz}, {0, 0, 0}, false, false, shared, stream, params);
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** params, void**) {
  if (!in_device_context()) return kInvalidContext;
  std::array<unsigned, 3> cluster{0, 0, 0};
  bool overlap = false;
  for (unsigned i = 0; i < c->numAttrs; ++i) {
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      cluster = {c->attrs[i].value.clusterDim.x, c->attrs[i].value.clusterDim.y, c->attrs[i].value.clusterDim.z};
    else if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      overlap = c->attrs[i].value.programmaticStreamSerializationAllowed != 0;
    else
      return kInvalidValue;
  }
  record_launch(f, {c->gridDimX, c->gridDimY, c->gridDimZ}, {c->blockDimX, c->blockDimY, c->blockDimZ}, cluster,
                overlap, true, c->sharedMemBytes, c->hStream, params);
  return CUDA_SUCCESS;
}
CUresult cuOccupancyMaxActiveClusters(int* clusters, CUfunction f, const CUlaunchConfig* c) {
  if (!in_device_context()) return kInvalidContext;
  std::array<unsigned, 3> cluster{0, 0, 0};
  for (unsigned i = 0; i < c->numAttrs; ++i)
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      cluster = {c->attrs[i].value.clusterDim.x, c->attrs[i].value.clusterDim.y, c->attrs[i].value.clusterDim.z};
  if (c->sharedMemBytes > static_cast<unsigned>(reinterpret_cast<Function*>(f)->max_dynamic_shared))
    return kInvalidValue;
  state.occupancy_queries.push_back({reinterpret_cast<Function*>(f)->name,
                                     {c->gridDimX, c->gridDimY, c->gridDimZ},
                                     {c->blockDimX, c->blockDimY, c->blockDimZ},
                                     cluster,
                                     false,
                                     true,
                                     c->sharedMemBytes,
                                     c->hStream,
                                     {}});
  *clusters = state.max_active_clusters;
  return CUDA_SUCCESS;
}

// Records its arguments; the map it writes is the bytes 0..127, so that a
// test sees them reach the caller.
CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, unsigned rank, void* address,
                                const unsigned long long* dims, const unsigned long long* strides,
                                const unsigned* box, const unsigned* element_strides, CUtensorMapInterleave interleave,
                                CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  if (!in_device_context()) return kInvalidContext;
  if (rank < 1 || rank > 5) return kInvalidValue;
  state.tensor_map_encodes.push_back({type, rank, reinterpret_cast<std::uint64_t>(address),
                                      std::vector<std::uint64_t>(dims, dims + rank),
                                      std::vector<std::uint64_t>(strides, strides + rank - 1),
                                      std::vector<unsigned>(box, box + rank),
                                      std::vector<unsigned>(element_strides, element_strides + rank), interleave,
                                      swizzle, l2, oob});
  auto* bytes = reinterpret_cast<std::uint8_t*>(map);
  for (unsigned i = 0; i < sizeof(CUtensorMap); ++i) bytes[i] = static_cast<std::uint8_t>(i);
  return CUDA_SUCCESS;
}

}  // extern "C"
