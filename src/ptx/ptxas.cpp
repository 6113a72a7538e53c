#include "warpforge/ptx/ptxas.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "warpforge/error.hpp"

namespace warpforge::ptx {
namespace fs = std::filesystem;

namespace {
bool executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); }

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

std::optional<std::string> find_ptxas() {
  if (const char* env = std::getenv("WARPFORGE_PTXAS"); env && *env) {
    if (executable(env)) return std::string(env);
    return std::nullopt;
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty() && executable(fs::path(dir) / "ptxas")) return (fs::path(dir) / "ptxas").string();
  }
  for (const char* root : {static_cast<const char*>(std::getenv("CUDA_HOME")), "/usr/local/cuda"})
    if (root && executable(fs::path(root) / "bin" / "ptxas")) return (fs::path(root) / "bin" / "ptxas").string();
  return std::nullopt;
}

PtxasResult run_ptxas(const std::string& text, const std::string& arch, const std::vector<std::string>& extra_args) {
  auto ptxas = find_ptxas();
  if (!ptxas) throw PtxError("ptxas not found: set WARPFORGE_PTXAS or put the CUDA toolkit's bin on PATH");
  static std::atomic<int> counter{0};
  fs::path dir = fs::temp_directory_path() /
                 ("warpforge-ptxas-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  fs::path in = dir / "input.ptx", out = dir / "output.cubin", log = dir / "log.txt";
  std::ofstream(in) << text;
  std::string cmd = quote(*ptxas) + " -arch=" + quote(arch) + " -o " + quote(out.string());
  for (const auto& a : extra_args) cmd += " " + quote(a);
  cmd += " " + quote(in.string()) + " > " + quote(log.string()) + " 2>&1";
  int status = std::system(cmd.c_str());
  PtxasResult result;
  result.ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::ifstream log_in(log);
  result.log.assign(std::istreambuf_iterator<char>(log_in), {});
  if (result.ok) {
    std::ifstream cubin(out, std::ios::binary);
    result.cubin.assign(std::istreambuf_iterator<char>(cubin), {});
  }
  fs::remove_all(dir);
  return result;
}

}  // namespace warpforge::ptx
