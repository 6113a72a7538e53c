// Runs the CUDA toolkit's ptxas on PTX text, to check that what warpforge
// emits assembles. ptxas is found through $WARPFORGE_PTXAS, then $PATH, then
// /usr/local/cuda/bin (cuda_toolkit.hpp); it is optional (the GPU path JITs
// through the driver and needs no toolkit).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace warpforge::ptx {

std::optional<std::string> find_ptxas();

struct PtxasResult {
  bool ok = false;
  std::string log;               // ptxas's stderr + stdout; on failure ending with its status
                                 // ("ptxas killed by signal SIGSEGV (...)", ToolRun::status())
  std::vector<char> cubin;       // the assembled object when ok
};

// Assembles `text` for `arch` ("sm_90a"); throws PtxError if ptxas is absent.
PtxasResult run_ptxas(const std::string& text, const std::string& arch,
                      const std::vector<std::string>& extra_args = {});

}  // namespace warpforge::ptx
