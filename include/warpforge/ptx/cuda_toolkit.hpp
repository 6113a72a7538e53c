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
  int signal = 0;      // the signal that killed it (SIGSEGV, or SIGKILL after a timeout), else 0
  bool timed_out = false;
  double timeout_seconds = 0;  // the limit it ran under
  std::string output;  // its stdout and stderr, interleaved

  // "exit 3", "killed by signal SIGSEGV (Segmentation fault)", "timed out
  // after 600 s (killed; WARPFORGE_TOOL_TIMEOUT sets the limit)", "could not
  // be started": for messages.
  std::string status() const;
};

// The time an external tool (ptxas, LLVM's opt, llc, ld.lld) may run:
// $WARPFORGE_TOOL_TIMEOUT in seconds (a positive number; anything else is
// refused with a PtxError naming it), else 600.
double tool_timeout_seconds();

// Runs `program args...` without a shell and waits for it, at most
// `timeout_seconds` (0: tool_timeout_seconds()), after which it is killed.
ToolRun run_tool(const std::string& program, const std::vector<std::string>& args,
                 double timeout_seconds = 0);

}  // namespace warpforge::ptx
