// Finding and running the CUDA toolkit's command-line tools (ptxas, nvcc).
// Only tests and the CLI use them, to check emitted PTX against NVIDIA's
// assembler; the library never needs them at run time (DESIGN.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warpforge::ptx {

// The path of an executable `name` on PATH, else in /usr/local/cuda/bin;
// nullopt when neither has it.
std::optional<std::string> find_cuda_tool(std::string_view name);

struct ToolRun {
  int exit_code = -1;  // the program's exit status; -1 if it could not be started or was killed
  std::string output;  // its stdout and stderr, interleaved
};

// Runs `program args...` without a shell and waits for it.
ToolRun run_tool(const std::string& program, const std::vector<std::string>& args);

}  // namespace warpforge::ptx
