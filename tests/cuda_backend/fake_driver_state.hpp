// What the stand-in libcuda.so.1 (fake_driver/libcuda.cpp) records, shared
// with the tests that inspect it through fake_driver_state().
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace warpforge::runtime::fake_driver {

struct Launch {
  std::string function;
  std::array<unsigned, 3> grid, block, cluster;  // cluster {0,0,0}: no cluster attribute
  bool overlap_previous;                         // the programmatic stream serialization attribute
  bool ex;                                       // through cuLaunchKernelEx
  unsigned shared_bytes;
  void* stream;
  std::vector<std::vector<std::uint8_t>> params;  // sized by State::param_sizes
};

// The arguments of one cuTensorMapEncodeTiled call.
struct TensorMapEncode {
  int dtype;
  unsigned rank;
  std::uint64_t address;
  std::vector<std::uint64_t> dims, strides;
  std::vector<unsigned> box, element_strides;
  int interleave, swizzle, l2_promotion, oob_fill;
};

struct State {
  int link_creates = 0;
  std::vector<int> jit_targets;  // the CU_JIT_TARGET of each cuLinkCreate, -1 when absent
  int module_loads = 0;
  std::vector<int> whole_program_targets;  // cuModuleLoadDataEx of PTX text: its CU_JIT_TARGET, or -1
  std::vector<std::pair<std::string, int>> dynamic_shared_sets;  // cuFuncSetAttribute calls
  std::vector<Launch> launches;
  std::vector<std::size_t> param_sizes;
  std::vector<TensorMapEncode> tensor_map_encodes;  // how many bytes of each parameter a launch records
  std::vector<Launch> occupancy_queries;  // cuOccupancyMaxActiveClusters calls (params empty)
  int max_active_clusters = 0;            // what cuOccupancyMaxActiveClusters answers
  int context_switches = 0;               // cuCtxSetCurrent calls
};

}  // namespace warpforge::runtime::fake_driver

// The fake exports `extern "C" State* fake_driver_state()`; tests find it with
// dlsym, since they do not link the fake (the runtime dlopens it).
