// The `warpforge` program (WARPFORGE_CLI) run as a user runs it: its exit
// status and everything it printed.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace warpforge::cli::testing {

struct Result {
  int status;
  std::string output;  // stdout and stderr
};

inline Result run(const std::string& args) {
  std::string command = WARPFORGE_CLI;
  command.append(" ").append(args).append(" 2>&1");
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Whether `warpforge args` exits with status 1 having printed `message`.
inline ::testing::AssertionResult refuses(const std::string& args, const std::string& message) {
  const Result r = run(args);
  if (r.status == 1 && r.output.find(message) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "warpforge " << args << ": exit " << r.status << ", wanted 1 and '" << message
                                       << "'; printed:\n"
                                       << r.output;
}

}  // namespace warpforge::cli::testing
