// The few CUDA Driver API types, constants and entry-point signatures the CUDA
// backend uses, declared here so that warpforge builds without the CUDA
// toolkit and links without libcuda (the driver is dlopen'd, see driver.hpp).
// Every value and layout is copied from the CUDA Driver API reference
// (cuda.h of CUDA 13.0; the sections are named beside each group) and must
// only ever be extended, never changed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace warpforge::runtime::cuda {

// "Data types used by CUDA driver": opaque handles and the device pointer.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // CUdeviceptr_v2
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUlinkState = struct CUlinkState_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;

// CUdevice_attribute
enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

// CUfunction_attribute
enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

// CUjit_option: option values are passed as void*, sizes cast to pointers.
enum CUjit_option : int {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_TARGET = 9,
  CU_JIT_LOG_VERBOSE = 12,
};

// CUjit_target: the arch-specific ('a') targets are CU_TARGET_COMPUTE_NN
// plus this base (CU_TARGET_COMPUTE_90A = 0x10000 + 90).
inline constexpr int CU_COMPUTE_ACCELERATED_TARGET_BASE = 0x10000;

// CUjitInputType
enum CUjitInputType : int { CU_JIT_INPUT_PTX = 1 };

// CUlaunchAttributeID and the launch structures of cuLaunchKernelEx
// ("Execution Control"). The attribute's value is a 64-byte union whose
// members include pointers, so it is 8-byte aligned; `id` is padded to 8.
enum CUlaunchAttributeID : int {
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
};

union CUlaunchAttributeValue {
  char pad[64];
  struct {
    unsigned int x, y, z;
  } clusterDim;
  int programmaticStreamSerializationAllowed;
  void* alignment_;  // stands for the union's pointer-holding members
};

struct CUlaunchAttribute {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
};

struct CUlaunchConfig {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned int numAttrs;
};

static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout differs from cuda.h");
static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig layout differs from cuda.h");

// "Tensor Map Object Management" (cuTensorMapEncodeTiled): the opaque
// 64-byte-aligned 128-byte map and the enums of its encoding.
struct alignas(64) CUtensorMap {
  unsigned long long opaque[16];
};
enum CUtensorMapDataType : int {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
  CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
  CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
  CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
};
enum CUtensorMapInterleave : int { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
enum CUtensorMapSwizzle : int {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
};
enum CUtensorMapL2promotion : int {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
};
enum CUtensorMapFloatOOBfill : int { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 };
static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap layout differs from cuda.h");

// Entry-point signatures, named by the symbol the driver exports (the `_v2`
// names where cuda.h maps the API name to one).
using PFN_cuGetErrorName = CUresult (*)(CUresult, const char**);
using PFN_cuGetErrorString = CUresult (*)(CUresult, const char**);
using PFN_cuInit = CUresult (*)(unsigned int);
using PFN_cuDriverGetVersion = CUresult (*)(int*);
using PFN_cuDeviceGetCount = CUresult (*)(int*);
using PFN_cuDeviceGet = CUresult (*)(CUdevice*, int);
using PFN_cuDeviceGetName = CUresult (*)(char*, int, CUdevice);
using PFN_cuDeviceGetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
using PFN_cuDeviceTotalMem_v2 = CUresult (*)(std::size_t*, CUdevice);
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext*, CUdevice);
using PFN_cuDevicePrimaryCtxRelease_v2 = CUresult (*)(CUdevice);
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext);
using PFN_cuCtxGetCurrent = CUresult (*)(CUcontext*);
using PFN_cuCtxSynchronize = CUresult (*)();
using PFN_cuMemGetInfo_v2 = CUresult (*)(std::size_t*, std::size_t*);
using PFN_cuMemAlloc_v2 = CUresult (*)(CUdeviceptr*, std::size_t);
using PFN_cuMemFree_v2 = CUresult (*)(CUdeviceptr);
using PFN_cuMemcpyHtoD_v2 = CUresult (*)(CUdeviceptr, const void*, std::size_t);
using PFN_cuMemcpyDtoH_v2 = CUresult (*)(void*, CUdeviceptr, std::size_t);
using PFN_cuMemcpyDtoD_v2 = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t);
using PFN_cuMemcpyHtoDAsync_v2 = CUresult (*)(CUdeviceptr, const void*, std::size_t, CUstream);
using PFN_cuMemcpyDtoHAsync_v2 = CUresult (*)(void*, CUdeviceptr, std::size_t, CUstream);
using PFN_cuMemcpyDtoDAsync_v2 = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);
using PFN_cuMemsetD8_v2 = CUresult (*)(CUdeviceptr, unsigned char, std::size_t);
using PFN_cuMemsetD8Async = CUresult (*)(CUdeviceptr, unsigned char, std::size_t, CUstream);
using PFN_cuStreamCreate = CUresult (*)(CUstream*, unsigned int);
using PFN_cuStreamDestroy_v2 = CUresult (*)(CUstream);
using PFN_cuStreamSynchronize = CUresult (*)(CUstream);
using PFN_cuEventCreate = CUresult (*)(CUevent*, unsigned int);
using PFN_cuEventRecord = CUresult (*)(CUevent, CUstream);
using PFN_cuEventSynchronize = CUresult (*)(CUevent);
using PFN_cuEventElapsedTime = CUresult (*)(float*, CUevent, CUevent);
using PFN_cuEventDestroy_v2 = CUresult (*)(CUevent);
using PFN_cuModuleLoadDataEx = CUresult (*)(CUmodule*, const void*, unsigned int, CUjit_option*, void**);
using PFN_cuModuleUnload = CUresult (*)(CUmodule);
using PFN_cuModuleGetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using PFN_cuLinkCreate_v2 = CUresult (*)(unsigned int, CUjit_option*, void**, CUlinkState*);
using PFN_cuLinkAddData_v2 = CUresult (*)(CUlinkState, CUjitInputType, void*, std::size_t, const char*,
                                          unsigned int, CUjit_option*, void**);
using PFN_cuLinkComplete = CUresult (*)(CUlinkState, void**, std::size_t*);
using PFN_cuLinkDestroy = CUresult (*)(CUlinkState);
using PFN_cuFuncGetAttribute = CUresult (*)(int*, CUfunction_attribute, CUfunction);
using PFN_cuFuncSetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
using PFN_cuLaunchKernel = CUresult (*)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                                        unsigned int, unsigned int, unsigned int, CUstream, void**, void**);
using PFN_cuTensorMapEncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, unsigned int, void*,
                                                const unsigned long long*, const unsigned long long*,
                                                const unsigned int*, const unsigned int*, CUtensorMapInterleave,
                                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
using PFN_cuLaunchKernelEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
using PFN_cuOccupancyMaxActiveClusters = CUresult (*)(int*, CUfunction, const CUlaunchConfig*);

}  // namespace warpforge::runtime::cuda
