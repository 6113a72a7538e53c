#include "warpforge/ptx/ptxas.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "warpforge/error.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"

namespace warpforge::ptx {
namespace fs = std::filesystem;

std::optional<std::string> find_ptxas() {
  if (const char* env = std::getenv("WARPFORGE_PTXAS"); env && *env) {
    if (::access(env, X_OK) == 0 && fs::is_regular_file(env)) return std::string(env);
    return std::nullopt;  // an explicit choice that is not there means: no ptxas
  }
  return find_cuda_tool("ptxas");
}

PtxasResult run_ptxas(const std::string& text, const std::string& arch, const std::vector<std::string>& extra_args) {
  auto ptxas = find_ptxas();
  if (!ptxas) throw PtxError("ptxas not found: set WARPFORGE_PTXAS or put the CUDA toolkit's bin on PATH");
  static std::atomic<int> counter{0};
  fs::path dir = fs::temp_directory_path() /
                 ("warpforge-ptxas-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  fs::path in = dir / "input.ptx", out = dir / "output.cubin";
  std::ofstream(in) << text;
  std::vector<std::string> args{"-arch=" + arch, "-o", out.string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  args.push_back(in.string());
  ToolRun run = run_tool(*ptxas, args);
  PtxasResult result;
  result.ok = run.exit_code == 0;
  result.log = std::move(run.output);
  if (run.exit_code != 0) result.log += "ptxas " + run.status() + "\n";
  if (result.ok) {
    std::ifstream cubin(out, std::ios::binary);
    result.cubin.assign(std::istreambuf_iterator<char>(cubin), {});
  }
  fs::remove_all(dir);
  return result;
}

}  // namespace warpforge::ptx
