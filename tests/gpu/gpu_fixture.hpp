// The fixture of the GPU tests: skips, saying why, where there is no usable
// CUDA GPU, and points the compiled-module cache at a fresh directory so that
// each test starts cold and leaves nothing behind.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "warpforge/error.hpp"
#include "warpforge/runtime/cuda_backend.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::runtime::gpu_testing {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Device::cuda_count() == 0) {
      std::string why = "no CUDA driver or GPU";
      try {
        Device::cuda(0);
      } catch (const Error& e) {
        why = e.what();
      }
      GTEST_SKIP() << "needs a CUDA GPU: " << why;
    }
    cache_dir_ = std::filesystem::temp_directory_path() /
                 ("warpforge-gpu-test-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(cache_dir_);
    if (const char* old = std::getenv("WARPFORGE_CACHE_DIR")) saved_env_ = old;
    ::setenv("WARPFORGE_CACHE_DIR", cache_dir_.c_str(), 1);
  }

  void TearDown() override {
    if (cache_dir_.empty()) return;  // skipped
    if (saved_env_) ::setenv("WARPFORGE_CACHE_DIR", saved_env_->c_str(), 1);
    else ::unsetenv("WARPFORGE_CACHE_DIR");
    std::filesystem::remove_all(cache_dir_);
  }

  static BinaryCache::Stats cache_stats(const Device& device) {
    return dynamic_cast<CudaBackend&>(device.backend()).binary_cache().stats();
  }

  std::filesystem::path cache_dir_;
  std::optional<std::string> saved_env_;
};

}  // namespace warpforge::runtime::gpu_testing
