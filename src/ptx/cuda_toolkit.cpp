#include "warpforge/ptx/cuda_toolkit.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "warpforge/error.hpp"

extern char** environ;

namespace warpforge::ptx {
namespace {

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> find_cuda_tool(std::string_view name) {
  std::string dirs = std::getenv("PATH") ? std::getenv("PATH") : "";
  dirs += ":/usr/local/cuda/bin";
  std::istringstream split(dirs);
  for (std::string dir; std::getline(split, dir, ':');) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + std::string(name);
    if (is_executable(candidate)) return candidate;
  }
  return std::nullopt;
}

std::string ToolRun::status() const {
  if (timed_out)
    return "timed out after " + std::to_string(static_cast<long long>(timeout_seconds)) +
           " s (killed; WARPFORGE_TOOL_TIMEOUT sets the limit in seconds)";
  if (signal) {
    const char* abbrev = ::sigabbrev_np(signal);
    const char* text = ::strsignal(signal);
    return "killed by signal " + (abbrev ? "SIG" + std::string(abbrev) : std::to_string(signal)) +
           (text ? " (" + std::string(text) + ")" : "");
  }
  if (exit_code < 0) return "could not be started";
  return "exit " + std::to_string(exit_code);
}

double tool_timeout_seconds() {
  const char* text = std::getenv("WARPFORGE_TOOL_TIMEOUT");
  if (!text || !*text) return 600;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (*end != '\0' || errno == ERANGE || !(v > 0) || v > 1e9)
    throw PtxError(std::string("WARPFORGE_TOOL_TIMEOUT='") + text +
                   "' refused; expected a positive number of seconds up to 1e9");
  return v;
}

ToolRun run_tool(const std::string& program, const std::vector<std::string>& args,
                 double timeout_seconds) {
  const double limit = timeout_seconds > 0 ? timeout_seconds : tool_timeout_seconds();
  ToolRun result;
  result.timeout_seconds = limit;
  // The output goes to an unlinked temporary file: no pipe to drain while waiting.
  char log_path[] = "/tmp/warpforge-tool-XXXXXX";
  int log_fd = ::mkstemp(log_path);
  if (log_fd < 0) return result;
  ::unlink(log_path);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, log_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, log_fd, STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == 0) {
    // Polled, with a growing pause (1 ms to 50 ms): a fast tool costs little
    // latency and a slow one little CPU.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
    auto pause = std::chrono::milliseconds(1);
    int status = 0;
    for (;;) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) break;
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        result.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  } else {
    result.output = "cannot start " + program + "\n";
  }
  ::lseek(log_fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; (n = ::read(log_fd, buf, sizeof buf)) > 0;)
    result.output.append(buf, static_cast<std::size_t>(n));
  ::close(log_fd);
  return result;
}

}  // namespace warpforge::ptx
