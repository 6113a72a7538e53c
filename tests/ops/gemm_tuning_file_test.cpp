// The autotune file's stores are read-modify-writes of one shared file: many
// threads in several processes storing at once must each keep their line.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "../../src/ops/gemm/gemm_tuning_file.hpp"

namespace warpforge::ops::testing {
namespace {

namespace fs = std::filesystem;

TEST(GemmTuningFile, ConcurrentStoresFromThreadsAndProcessesKeepEveryLine) {
  const fs::path dir =
      fs::temp_directory_path() / ("warpforge-tuning-file-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const GemmTuningFile file(dir / "gemm-autotune.txt");
  constexpr int kProcesses = 3, kThreads = 4, kStores = 10;
  auto choice_for = [](int p, int t, int s) {
    TunedChoice c;
    c.config.tile_m = 64 + p;
    c.config.tile_n = 64 + t;
    c.config.tile_k = 32 + s;
    return c;
  };
  auto key_for = [](int p, int t, int s) {
    return "process " + std::to_string(p) + " thread " + std::to_string(t) + " store " +
           std::to_string(s);
  };
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          for (int s = 0; s < kStores; ++s) file.store(key_for(p, t, s), choice_for(p, t, s));
        });
      for (auto& t : threads) t.join();
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int p = 0; p < kProcesses; ++p)
    for (int t = 0; t < kThreads; ++t)
      for (int s = 0; s < kStores; ++s)
        EXPECT_EQ(file.find(key_for(p, t, s)), choice_for(p, t, s)) << key_for(p, t, s);
  for (const auto& e : fs::directory_iterator(dir))  // no temporary left behind
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warpforge::ops::testing
