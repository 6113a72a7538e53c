// The autotuner's mechanism on the simulator (its timings mean nothing there,
// but what it does with them is the same): the winner is written beside the
// binary cache, read back by the next compile instead of tuning again, and a
// corrupt file is ignored with a warning and rewritten.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ops/gemm_operands.hpp"
#include "warpforge/ops/gemm.hpp"

namespace warpforge::ops::testing {
namespace {

namespace fs = std::filesystem;
using runtime::DType;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class GemmAutotune : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("warpforge-autotune-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    if (const char* old = std::getenv("WARPFORGE_CACHE_DIR")) saved_ = old;
    ::setenv("WARPFORGE_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (saved_)
      ::setenv("WARPFORGE_CACHE_DIR", saved_->c_str(), 1);
    else
      ::unsetenv("WARPFORGE_CACHE_DIR");
    fs::remove_all(dir_);
  }

  // Compiles (autotuning) a fixed problem and checks its result.
  GemmConfig tuned_config() {
    auto a = make_matrix(dev_, DType::bf16, {0, 20, 24}, rng_),
         b = make_matrix(dev_, DType::bf16, {0, 24, 36}, rng_);
    auto d = make_matrix(dev_, DType::f32, {0, 20, 36}, rng_, true);
    Gemm g(a.view, b.view, nullptr, d.view, {.kernel = GemmKernel::sm80, .autotune = true});
    g.compile();
    g.execute(a.view, b.view, nullptr, d.view);
    EXPECT_LE(max_relative_error(HostTensor::download(d.view),
                                 gemm_reference(a.host, b.host, nullptr, 1, 0), 1.0),
              1e-4);
    return g.config();
  }

  fs::path file() const { return dir_ / "gemm-autotune.txt"; }

  fs::path dir_;
  std::optional<std::string> saved_;
  runtime::Device dev_ = runtime::Device::sim();
  std::mt19937 rng_{std::random_device{}()};
};

TEST_F(GemmAutotune, WritesTheWinnerAndReadsItBack) {
  const GemmConfig first = tuned_config();
  const std::string text = read(file());
  ASSERT_EQ(text.rfind("# warpforge gemm autotune v3\nsm80 ", 0), 0u) << text;
  EXPECT_NE(text.find(std::to_string(first.tile_m) + " " + std::to_string(first.tile_n) + " " +
                      std::to_string(first.tile_k) + " " + std::to_string(first.stages)),
            std::string::npos)
      << text;
  const auto tab = text.find('\t');
  ASSERT_NE(tab, std::string::npos);
  const std::string stored_key = text.substr(tab + 1, text.find('\n', tab) - tab - 1);
  EXPECT_NE(stored_key.find("20x36x24 L1 bf16->f32 A row B row D row"), std::string::npos)
      << stored_key;

  // Another valid choice written into the file is what the next compile uses.
  const bool was_small = first.tile_m == 32;
  const std::string other = was_small ? "sm80 64 64 32 3 2 2 1 1 0 0" : "sm80 32 32 32 2 1 1 1 1 0 0";
  std::ofstream(file()) << "# warpforge gemm autotune v3\n" << other << "\t" << stored_key << "\n";
  const GemmConfig second = tuned_config();
  EXPECT_EQ(second.tile_m, was_small ? 64 : 32);
  EXPECT_EQ(read(file()).find(other), read(file()).find('\n') + 1);  // not re-tuned, not rewritten
}

TEST_F(GemmAutotune, CorruptFileIsIgnoredWithAWarningAndRewritten) {
  fs::create_directories(dir_);
  std::ofstream(file()) << "this is not an autotune file\n";
  ::testing::internal::CaptureStderr();
  tuned_config();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warpforge: autotune file " + file().string() +
                     " line 1 is not the header '# warpforge gemm autotune v3'; ignoring the file"),
            std::string::npos)
      << err;
  EXPECT_EQ(read(file()).rfind("# warpforge gemm autotune v3\nsm80 ", 0), 0u);

  const std::pair<const char*, const char*> broken[] = {
      {"# warpforge gemm autotune v3\nsm80 64 sixty-four\tkey\n",
       "line 2 is not 'kernel tile_m tile_n tile_k stages warps_m warps_n cluster_m cluster_n pingpong stream_k'"},
      {"# warpforge gemm autotune v3\nsm80 64 64 32 3 2 2 1 1 0 0 key\n",
       "line 2 has no tab between the choice and the key"},
      {"", "gemm-autotune.txt is empty; ignoring the file"},
  };
  for (const auto& [text, warning] : broken) {
    std::ofstream(file()) << text;
    ::testing::internal::CaptureStderr();
    tuned_config();
    const std::string got = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(got.find(warning), std::string::npos) << got;
  }
}

TEST_F(GemmAutotune, ARememberedChoiceTheKernelNoLongerTakesIsRetuned) {
  tuned_config();
  std::string text = read(file());
  const std::string stored_key =
      text.substr(text.find('\t') + 1, text.find('\n', text.find('\t')) - text.find('\t') - 1);
  std::ofstream(file()) << "# warpforge gemm autotune v3\nsm80 96 64 32 3 2 2 1 1 0 0\t" << stored_key
                        << "\n";
  const GemmConfig config = tuned_config();
  EXPECT_NE(config.tile_m, 96);
  EXPECT_EQ(read(file()).find("sm80 96"), std::string::npos);
}

}  // namespace
}  // namespace warpforge::ops::testing
