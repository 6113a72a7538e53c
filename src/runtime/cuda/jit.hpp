// PTX -> cubin through the driver's JIT linker (cuLinkCreate / cuLinkAddData /
// cuLinkComplete), capturing ptxas's logs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace warpforge::runtime::cuda {

// Compiles for the device of the current context. Throws CudaError whose
// description is the JIT's error log with each PTX line it names quoted
// (explain_jit_log); `what` names the module in messages.
std::vector<std::uint8_t> compile_ptx(const std::string& ptx, const std::string& what);

}  // namespace warpforge::runtime::cuda
