// PTX -> cubin through the driver's JIT linker (cuLinkCreate / cuLinkAddData /
// cuLinkComplete), capturing ptxas's logs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace warpforge::runtime::cuda {

// Compiles for the device of the current context. PTX for an arch-specific
// target (.target sm_90a) must name the matching CUjit_target: ptxas refuses
// to compile sm_90a PTX for plain sm_90, which is what the context implies, so
// `jit_target` (a CUjit_target value) is passed as CU_JIT_TARGET when set.
// Throws CudaError whose description is the JIT's error log with each PTX
// line it names quoted (explain_jit_log); `what` names the module in messages.
std::vector<std::uint8_t> compile_ptx(const std::string& ptx, const std::string& what,
                                      std::optional<int> jit_target);

}  // namespace warpforge::runtime::cuda
