// `warpforge gemm` run as a user runs it (on the simulator): its report, its
// check against the reference, its refusals, and the .npy files of --save,
// read back with an independent reader and multiplied out again here.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "npy_file.hpp"
#include "npy_reader.hpp"
#include "run_cli.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::cli::testing {
namespace {

namespace fs = std::filesystem;

class GemmCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("warpforge-gemm-cli-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Element i (in the file's order) of a .npy array as a double.
double value(const NpyFile& f, std::size_t i) {
  if (f.descr == "<f4") {
    float x;
    std::memcpy(&x, &f.data[i * 4], 4);
    return x;
  }
  std::uint16_t h;
  std::memcpy(&h, &f.data[i * 2], 2);
  return f.descr == "<f2" ? ops::f16_bits_to_f32(h) : ops::bf16_bits_to_f32(h);
}

// Element (batch, r, c) of a rank-2 or rank-3 array, honouring fortran_order.
double at(const NpyFile& f, std::int64_t b, std::int64_t r, std::int64_t c) {
  const std::size_t rank = f.shape.size();
  const std::int64_t rows = f.shape[rank - 2], cols = f.shape[rank - 1];
  if (f.fortran_order) return value(f, static_cast<std::size_t>(r + c * rows));
  return value(f, static_cast<std::size_t>((b * rows + r) * cols + c));
}

TEST_F(GemmCommand, ReportsTheKernelAndPassesItsCheck) {
  Result r = run("gemm --m 19 --n 23 --k 29 --kernel sm80 --device sim --check --bench --reps 2");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("kernel: sm80, config 64x64x32 s3 w2x2 c1x1"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("vs fp64 reference (tolerance 1e-02): PASS"), std::string::npos)
      << r.output;
  // The simulator's time measures nothing about a GPU: --bench says so
  // instead of printing a rate.
  EXPECT_NE(r.output.find("bench: skipped: the CPU simulator's run time says nothing about a GPU's"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("TFLOP/s"), std::string::npos) << r.output;
}

// --config takes the configuration line's own text; a configuration the
// kernel refuses fails with the kernel's reasons.
TEST_F(GemmCommand, RunsTheConfigurationGiven) {
  Result r = run("gemm --m 70 --n 136 --k 40 --kernel sm90a --device sim --check "
                 "--config '64x128x64 s2 w1x1 c1x1 pingpong'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("kernel: sm90a, config 64x128x64 s2 w1x1 c1x1 pingpong"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
  Result refused = run("gemm --m 70 --n 136 --k 40 --kernel sm90a --device sim --config '64x128x64 s2 w1x1 c2x2'");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.output.find("cluster 2x2; the sm90a kernel takes 1x1, 2x1"), std::string::npos)
      << refused.output;
  Result malformed = run("gemm --m 70 --n 136 --k 40 --device sim --config '64x128 s2'");
  EXPECT_EQ(malformed.status, 1);
  EXPECT_NE(malformed.output.find("--config '64x128 s2': accepted 'MxNxK sS wAxB cCxD [pingpong] [streamk]'"),
            std::string::npos)
      << malformed.output;
}

TEST_F(GemmCommand, SavesOperandsThatMultiplyOutToD) {
  // Batched, A column-major, B row-major, f16 in, f32 out, with C.
  Result r =
      run("gemm --m 19 --n 23 --k 29 --l 2 --dtype f16 --layout tn --out-dtype f32 --alpha 0.5 "
          "--beta 1 "
          "--device sim --save " +
          dir_.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const NpyFile a = read_npy(dir_ / "a.npy"), b = read_npy(dir_ / "b.npy"),
                c = read_npy(dir_ / "c.npy"), d = read_npy(dir_ / "d.npy");
  for (const NpyFile* f : {&a, &b, &c, &d}) {
    EXPECT_EQ(f->major, 1);
    EXPECT_EQ(f->minor, 0);
    EXPECT_EQ(f->header_bytes % 64, 0u);
  }
  EXPECT_EQ(a.descr, "<f2");
  EXPECT_EQ(d.descr, "<f4");
  EXPECT_EQ(c.descr, "<f4");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 19, 29}));
  EXPECT_EQ(b.shape, (std::vector<std::int64_t>{2, 29, 23}));
  EXPECT_EQ(d.shape, (std::vector<std::int64_t>{2, 19, 23}));
  EXPECT_FALSE(a.fortran_order);  // a batch of column-major matrices is written in C order
  EXPECT_EQ(a.data.size(), 2u * 19 * 29 * 2);
  EXPECT_EQ(d.data.size(), 2u * 19 * 23 * 4);
  double worst = 0;
  for (std::int64_t l = 0; l < 2; ++l)
    for (std::int64_t i = 0; i < 19; ++i)
      for (std::int64_t j = 0; j < 23; ++j) {
        double want = 0;
        for (std::int64_t k = 0; k < 29; ++k) want += at(a, l, i, k) * at(b, l, k, j);
        want = 0.5 * want + at(c, l, i, j);
        worst = std::max(worst, std::abs(at(d, l, i, j) - want) / std::max(std::abs(want), 1.0));
      }
  EXPECT_LE(worst, 1e-4);
}

TEST_F(GemmCommand, SavesColumnMajorMatricesInFortranOrderAndBf16AsBits) {
  Result r = run("gemm --m 7 --n 5 --k 3 --layout tt --device sim --save " + dir_.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const NpyFile a = read_npy(dir_ / "a.npy"), b = read_npy(dir_ / "b.npy"),
                d = read_npy(dir_ / "d.npy");
  EXPECT_FALSE(fs::exists(dir_ / "c.npy"));
  EXPECT_EQ(a.descr, "<u2");
  EXPECT_TRUE(a.fortran_order);
  EXPECT_TRUE(b.fortran_order);
  EXPECT_FALSE(d.fortran_order);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{7, 3}));
  EXPECT_EQ(d.descr, "<u2");
  for (std::int64_t i = 0; i < 7; ++i)
    for (std::int64_t j = 0; j < 5; ++j) {
      double want = 0;
      for (std::int64_t k = 0; k < 3; ++k) want += at(a, 0, i, k) * at(b, 0, k, j);
      EXPECT_NEAR(at(d, 0, i, j), want, 1e-2 * std::max(std::abs(want), 1.0)) << i << "," << j;
    }
}

TEST_F(GemmCommand, RefusesBadArgumentsSayingWhatIsAccepted) {
  EXPECT_TRUE(refuses("gemm --m 4 --n 4 --k 4 --layout xx --device sim", "--layout 'xx' refused; accepted: nn, nt, tn, tt"));
  EXPECT_TRUE(refuses("gemm --m 4 --n 4 --device sim", "--m, --n and --k are required"));
  EXPECT_TRUE(refuses("gemm --m 0 --n 4 --k 4 --device sim", "--m '0' refused; expected an integer from 1 to 2147483647"));
  EXPECT_TRUE(refuses("gemm --m 4 --n 4 --k 4 --kernel sm70 --device sim", "--kernel 'sm70' refused; accepted: auto, sm80, sm90a"));
  EXPECT_TRUE(refuses("gemm --m 4 --n 4 --k 4 --dtype f32 --device sim", "--dtype 'f32' refused; accepted: bf16, f16"));
}

TEST(NpyHeader, SpellsShapesAsPythonTuplesAndPadsTo64Bytes) {
  const std::string one = npy_header("<f4", {3}, false), two = npy_header("<u2", {2, 5}, true);
  EXPECT_EQ(one.size() % 64, 0u);
  EXPECT_EQ(two.size() % 64, 0u);
  EXPECT_NE(one.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
            std::string::npos);
  EXPECT_NE(two.find("{'descr': '<u2', 'fortran_order': True, 'shape': (2, 5), }"),
            std::string::npos);
  EXPECT_EQ(one.back(), '\n');
  EXPECT_EQ(static_cast<std::size_t>(static_cast<unsigned char>(one[8]) |
                                     (static_cast<unsigned char>(one[9]) << 8)),
            one.size() - 10);
  EXPECT_THROW(npy_descr(runtime::DType::i32), Error);
}

// A benchmark that needs a GPU measures nothing without one, and says so
// with a failing status rather than a table of zeros.
TEST(BenchCommand, WithoutAGpuFailsSayingSo) {
  if (runtime::Device::cuda_count() > 0)
    GTEST_SKIP() << "a GPU is present: the benchmark would run";
  Result r = run("bench launch");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("bench_launch needs a CUDA GPU; nothing measured"), std::string::npos)
      << r.output;
  if (!fs::exists(fs::path(WARPFORGE_CLI).parent_path() / "bench" / "bench_gemm"))
    GTEST_SKIP() << "bench_gemm is not built (CMake found no cuBLAS)";
  Result gemm = run("bench gemm --shapes 256x256x256");
  EXPECT_EQ(gemm.status, 1) << gemm.output;
  EXPECT_NE(gemm.output.find("bench_gemm: needs a CUDA GPU (none found); nothing measured"),
            std::string::npos)
      << gemm.output;
}

TEST(BenchCommand, SaysWhichProgramItLacks) {
  Result none = run("bench");
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.output.find("which benchmark? `warpforge bench gemm` runs build/bench/bench_gemm"),
            std::string::npos)
      << none.output;
  Result missing = run("bench nosuch");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find(
                "/bench/bench_nosuch does not exist: this build has no 'nosuch' benchmark"),
            std::string::npos)
      << missing.output;
}

}  // namespace
}  // namespace warpforge::cli::testing
