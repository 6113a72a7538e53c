// Structural round trip over nvcc's and Triton's output (tests/corpus:
// *.cu compiled for sm_80 and sm_90a with -O3, -G, -lineinfo and -rdc=true,
// recorded in tests/corpus/ptx by scripts/record-ptx-corpus.sh;
// triton_kernels.py's kernels for both targets, built by corpus.cmake):
//   parse(emit(parse(x))) == parse(x), and
//   ptxas(emit(parse(x))) gives the machine code ptxas(x) gives.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ptx/ptxas_version.hpp"
#include "ptx/same_machine_code.hpp"
#include "warpforge/ptx/cuda_toolkit.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/ptx/verifier.hpp"

namespace warpforge::ptx {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> corpus_files() {
  std::vector<fs::path> out;
  if (fs::is_directory(WARPFORGE_PTX_CORPUS_DIR))
    for (const auto& e : fs::directory_iterator(WARPFORGE_PTX_CORPUS_DIR))
      if (e.path().extension() == ".ptx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The first module item where two modules differ, as emitted text, so that a
// failure shows PTX rather than bytes.
std::string first_difference(const Module& a, const Module& b) {
  if (a.version_major != b.version_major || a.version_minor != b.version_minor ||
      a.target != b.target || a.address_size != b.address_size)
    return "the header differs";
  for (std::size_t i = 0; i < std::min(a.items.size(), b.items.size()); ++i) {
    if (a.items[i] == b.items[i]) continue;
    auto text = [](const ModuleItem& item) {
      Module m;
      m.items = {item};
      return emit(m);
    };
    return "item " + std::to_string(i) + ":\n" + text(a.items[i]) + "\nvs\n" + text(b.items[i]);
  }
  return "item counts " + std::to_string(a.items.size()) + " and " + std::to_string(b.items.size());
}

class RoundTrip : public ::testing::TestWithParam<fs::path> {};

TEST_P(RoundTrip, ReparsesEqualAndAssemblesToTheSameCode) {
  const fs::path& path = GetParam();
  const std::string original = read_file(path);
  const Module parsed = parse(original, path.string());
  const std::string emitted = emit(parsed);
  const Module reparsed = parse(emitted, "emitted");
  ASSERT_TRUE(reparsed == parsed) << first_difference(parsed, reparsed);
  ASSERT_FALSE(parsed.entries().empty());
  EXPECT_EQ(verify(parsed), std::vector<std::string>{});

  auto ptxas = find_cuda_tool("ptxas");
  if (!ptxas)
    GTEST_SKIP()
        << "ptxas not found on PATH or in /usr/local/cuda/bin: the structural check passed, "
           "the machine-code comparison needs the CUDA toolkit";
  const std::string difference =
      testing::machine_code_difference(*ptxas, original, emitted, testing::corpus_assembly(path));
  if (difference.find("Unsupported .version") != std::string::npos)
    GTEST_SKIP() << "this ptxas is older than the nvcc that recorded the corpus "
                    "(tests/corpus/ptx/nvcc-version.txt): the structural check passed\n"
                 << difference;
  EXPECT_EQ(difference, "");
}

std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string n = info.param.stem().string();
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(NvccCorpus, RoundTrip, ::testing::ValuesIn(corpus_files()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RoundTrip);

TEST(RoundTripCorpus, WasGenerated) {
  if (corpus_files().empty())
    GTEST_SKIP() << "no PTX in " << WARPFORGE_PTX_CORPUS_DIR
                 << ": tests/corpus/ptx held none when CMake configured the build";
  // Every source recorded (scripts/record-ptx-corpus.sh): hopper_*.cu for sm_90a
  // with all four flag sets; the others -O3 for sm_80 and sm_90a plus -G
  // (sm_90a), -lineinfo (sm_80), -rdc (sm_90a).
  for (const auto& entry : fs::directory_iterator(WARPFORGE_CORPUS_DIR)) {
    if (entry.path().extension() != ".cu") continue;
    const std::string stem = entry.path().stem().string();
    const bool hopper = stem.rfind("hopper_", 0) == 0;
    std::vector<std::string> expected = {stem + ".sm_90a.O3", stem + ".sm_90a.G", stem + ".sm_90a.rdc"};
    expected.push_back(hopper ? stem + ".sm_90a.lineinfo" : stem + ".sm_80.lineinfo");
    if (!hopper) expected.push_back(stem + ".sm_80.O3");
    for (const auto& name : expected)
      EXPECT_TRUE(fs::exists(fs::path(WARPFORGE_PTX_CORPUS_DIR) / (name + ".ptx")))
          << name << ".ptx was not recorded (scripts/record-ptx-corpus.sh)";
  }
  // corpus.cmake runs triton_kernels.py where Python imports triton: PTX for both targets.
  if (!WARPFORGE_TRITON_CORPUS) return;
  for (const std::string target : {"sm_80", "sm_90a"}) {
    int files = 0;
    for (const auto& path : corpus_files())
      files += path.filename().string().starts_with("triton_") && testing::corpus_assembly(path).target == target;
    EXPECT_GE(files, 4) << "Triton's PTX for " << target
                        << " was not generated (tests/corpus/triton_kernels.py)";
  }
}

// The recorded digest of an original's machine code (machine-code.txt)
// stands for its assembly: the original itself compares equal through it,
// and other PTX in its place is still found to differ (its digest differs,
// so both are assembled and compared).
TEST(RoundTripCorpus, RecordedMachineCodeTellsSameFromDifferent) {
  auto ptxas = find_cuda_tool("ptxas");
  const fs::path original = fs::path(WARPFORGE_PTX_CORPUS_DIR) / "atomics.sm_80.O3.ptx",
                 other = fs::path(WARPFORGE_PTX_CORPUS_DIR) / "cg_scan.sm_80.O3.ptx";
  if (!ptxas || !fs::exists(original) || !fs::exists(other))
    GTEST_SKIP() << "needs ptxas and the recorded corpus";
  const testing::Assembly how = testing::corpus_assembly(original);
  EXPECT_EQ(testing::machine_code_difference(*ptxas, read_file(original), read_file(original), how), "");
  EXPECT_EQ(testing::machine_code_difference(*ptxas, read_file(original), read_file(other), how),
            "the cubins differ");
}

// A round trip that same-machine-code.txt records is answered without
// ptxas (here /bin/false, which fails every assembly, once the record is
// read); a changed text is not in it and is assembled.
TEST(RoundTripCorpus, RecordedRoundTripIsAnsweredWithoutPtxas) {
  auto ptxas = find_cuda_tool("ptxas");
  const fs::path original = fs::path(WARPFORGE_PTX_CORPUS_DIR) / "atomics.sm_80.O3.ptx";
  std::ifstream record(fs::path(WARPFORGE_CORPUS_DIR) / "ptx" / "same-machine-code.txt");
  std::string version;
  if (!ptxas || !fs::exists(original) || !std::getline(record, version) ||
      version != "# " + testing::ptxas_version(*ptxas) || std::getenv("WARPFORGE_RECORD_SAME_MACHINE_CODE"))
    GTEST_SKIP() << "needs ptxas, the recorded corpus, and a record made with this ptxas";
  const testing::Assembly how = testing::corpus_assembly(original);
  const std::string text = read_file(original), emitted = emit(parse(text, original.string()));
  ASSERT_EQ(testing::machine_code_difference(*ptxas, text, emitted, how), "");
  EXPECT_EQ(testing::machine_code_difference("/bin/false", text, emitted, how), "");
  EXPECT_NE(testing::machine_code_difference("/bin/false", text, emitted + "\n// changed\n", how), "");
}

}  // namespace
}  // namespace warpforge::ptx
