// The `warpforge` program (WARPFORGE_CLI) run as a user runs it: its exit
// status and what it printed on stdout and on stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace warpforge::cli::testing {

struct Result {
  int status;
  std::string output;  // stdout, then stderr
  std::string out, err;
};

inline Result run(const std::string& args) {
  char err_path[] = "/tmp/warpforge-cli-test-stderr-XXXXXX";
  const int fd = ::mkstemp(err_path);
  if (fd >= 0) ::close(fd);
  std::string command = WARPFORGE_CLI;
  command.append(" ").append(args).append(" 2>").append(err_path);
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = ::pclose(pipe);
  std::stringstream err;
  err << std::ifstream(err_path, std::ios::binary).rdbuf();
  ::unlink(err_path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out + err.str(), out, err.str()};
}

// Whether `warpforge args` refuses as the CLI must: exit status 1 and one
// line on stderr that holds `message`.
inline ::testing::AssertionResult refuses(const std::string& args, const std::string& message,
                                          bool one_line = true) {
  const Result r = run(args);
  const bool lines_ok = !r.err.empty() && (!one_line || r.err.find('\n') == r.err.size() - 1);
  if (r.status == 1 && lines_ok && r.err.find(message) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "warpforge " << args << ": exit " << r.status << ", wanted 1 and "
                                       << (one_line ? "one line" : "a message") << " on stderr with '" << message
                                       << "'; stdout:\n"
                                       << r.out << "stderr:\n"
                                       << r.err;
}

// The same for an op's refusal, which lists each kernel's reasons on a line
// of its own under the first.
inline ::testing::AssertionResult refuses_listing(const std::string& args, const std::string& message) {
  return refuses(args, message, false);
}

}  // namespace warpforge::cli::testing
