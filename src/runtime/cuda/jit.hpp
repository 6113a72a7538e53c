// PTX -> device code through the driver's JIT: a cubin from the JIT linker
// (cuLinkCreate / cuLinkAddData / cuLinkComplete), which the binary cache
// keeps, or, for PTX that a linked compile would weaken, a module loaded
// straight from the PTX (cuModuleLoadDataEx). ptxas's logs are captured.
#pragma once


#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver_api.hpp"

namespace warpforge::runtime::cuda {

// Compiles for the device of the current context. PTX for an arch-specific
// target (.target sm_90a) must name the matching CUjit_target: ptxas refuses
// to compile sm_90a PTX for plain sm_90, which is what the context implies, so
// `jit_target` (a CUjit_target value) is passed as CU_JIT_TARGET when set.
// Throws CudaError whose description is the JIT's error log with each PTX
// line it names quoted (explain_jit_log); `what` names the module in messages.
std::vector<std::uint8_t> compile_ptx(const std::string& ptx, const std::string& what,
                                      std::optional<int> jit_target);

// Whether `ptx` must be compiled as a whole program rather than linked. The
// driver's linker compiles its PTX input as a relocatable unit (ptxas -c),
// and there ptxas ignores setmaxnreg (info C7504, "'setmaxnreg' ignored to
// maintain compatibility across compilation units"): warp-specialized
// kernels would run with the entry's even register split instead of the
// one they ask for. The driver exposes no whole-program cubin, so such
// modules skip warpforge's binary cache (the driver's own JIT cache, under
// CUDA_CACHE_PATH, keeps them).
bool needs_whole_program(const std::string& ptx);

// Compiles `ptx` as a whole program and loads it into the current context
// (cuModuleLoadDataEx on the PTX text); errors as compile_ptx's.
CUmodule load_whole_program(const std::string& ptx, const std::string& what, std::optional<int> jit_target);

}  // namespace warpforge::runtime::cuda
