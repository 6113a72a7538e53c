#include "warpforge/ptx/cuda_toolkit.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

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

ToolRun run_tool(const std::string& program, const std::vector<std::string>& args) {
  ToolRun result;
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
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
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
