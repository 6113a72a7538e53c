// The hand-built kernels of the GPU tests, assembled by ptxas for every
// target where the CUDA toolkit is installed, so that a GPU test failing on a
// GPU machine is not a malformed test kernel. Needs ptxas, not a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "warpforge/ptx/emitter.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> find_ptxas() {
  std::vector<fs::path> candidates;
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(fs::path(home) / "bin" / "ptxas");
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    for (std::size_t start = 0, end; start <= dirs.size(); start = end + 1) {
      end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      if (end > start) candidates.push_back(fs::path(dirs.substr(start, end - start)) / "ptxas");
    }
  }
  for (const auto& c : candidates)
    if (::access(c.c_str(), X_OK) == 0) return c;
  return std::nullopt;
}

struct Assembled {
  int status;
  std::string output;
};

Assembled assemble(const fs::path& ptxas, const ptx::Module& module, ptx::Target target) {
  const fs::path file = fs::temp_directory_path() / ("warpforge-ptxas-" + std::to_string(::getpid()) + ".ptx");
  std::ofstream(file) << ptx::emit(module);
  const std::string command =
      ptxas.string() + " -arch=" + std::string(ptx::name(target)) + " " + file.string() + " -o /dev/null 2>&1";
  Assembled result{-1, ""};
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    std::array<char, 512> chunk;
    while (std::fgets(chunk.data(), chunk.size(), pipe)) result.output += chunk.data();
    result.status = ::pclose(pipe);
  }
  fs::remove(file);
  return result;
}

class KernelsAssemble : public ::testing::Test {
 protected:
  void SetUp() override {
    ptxas_ = find_ptxas();
    if (!ptxas_) GTEST_SKIP() << "no ptxas (CUDA toolkit) in $CUDA_HOME/bin, /usr/local/cuda/bin or $PATH";
  }
  std::optional<fs::path> ptxas_;
};

TEST_F(KernelsAssemble, OnEveryTarget) {
  for (ptx::Target t : ptx::all_targets()) {
    std::vector<ptx::Module> kernels = {vector_add(t), shared_echo(t, 96 * 1024)};
    if (ptx::sm_number(t) >= 90) kernels.push_back(cluster_rank(t));
    for (const auto& k : kernels) {
      const Assembled a = assemble(*ptxas_, k, t);
      EXPECT_EQ(a.status, 0) << k.entries().front()->name << " on " << ptx::name(t) << ":\n" << a.output;
    }
  }
}

// The PTX error test expects ptxas to name the line of the bad instruction.
TEST_F(KernelsAssemble, RefusesThePlantedErrorOnItsLine) {
  const ptx::Target t = ptx::Target::sm_80;
  const ptx::Module bad = vector_add(t, {inst("add.pred", {r("%r6"), r("%r5"), r("%r5")})});
  const std::string text = ptx::emit(bad);
  const std::size_t at = text.find("add.pred");
  ASSERT_NE(at, std::string::npos);
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  const Assembled a = assemble(*ptxas_, bad, t);
  EXPECT_NE(a.status, 0);
  EXPECT_NE(a.output.find(", line " + std::to_string(line) + "; error"), std::string::npos) << a.output;
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
