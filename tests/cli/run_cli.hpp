// The `warpforge` program (WARPFORGE_CLI) run as a user runs it: its exit
// status and everything it printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace warpforge::cli::testing {

struct Result {
  int status;
  std::string output;  // stdout and stderr
};

inline Result run(const std::string& args) {
  const std::string command = std::string(WARPFORGE_CLI) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace warpforge::cli::testing
