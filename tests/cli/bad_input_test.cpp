// Inputs a new user gets wrong, given to the `warpforge` program: each is
// refused with exit status 1 and one message naming the value and the rule
// (never an abort, a hang, or a silent run with another value).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "run_cli.hpp"

namespace warpforge::cli::testing {
namespace {

namespace fs = std::filesystem;

struct Refusal {
  std::string args;     // the command line after `warpforge`
  std::string message;  // a part of what it must print
};

// Each refused with exit status 1 and the message.
void expect_refused(const std::vector<Refusal>& cases) {
  for (const Refusal& r : cases) EXPECT_TRUE(refuses(r.args, r.message));
}

TEST(BadInput, SizesBeyondTheDevicesMemoryAreRefusedBeforeAllocating) {
  for (const std::string command : {"gemm", "gemm-amax"})
    expect_refused({
        {command + " --m 99999999999 --n 8 --k 8 --device sim",
         "--m '99999999999' refused; expected an integer from 1 to 2147483647"},
        {command + " --m 2147483648 --n 8 --k 8 --device sim",
         "--m '2147483648' refused; expected an integer from 1 to 2147483647"},
        {command + " --m 1000000 --n 1000000 --k 1000000 --device sim",
         "1000000x1000000x1000000 L1 needs 6000000000000 bytes (5587.9 GiB) of device memory; "
         "warpforge simulator has"},
    });
  // Every factor in range, the product past 2^63.
  expect_refused({{"gemm --m 2147483647 --n 2147483647 --k 2147483647 --l 2147483647 --device sim",
                   "GEMM 2147483647x2147483647x2147483647 L2147483647 is too large: its sizes "
                   "multiply past 2^63 bytes"}});
}

TEST(BadInput, NumbersAreReadWholeOrRefused) {
  std::vector<Refusal> cases = {
      {"gemm-amax --tile 4294967424x256 --device sim",
       "--tile '4294967424x256' refused; expected MxN with M and N from 1 to 2147483647"},
      {"gemm-amax --tile 99999999999x1 --device sim", "--tile '99999999999x1' refused"},
      {"gemm-amax --cluster 2x --device sim", "--cluster '2x' refused"},
      {"gemm --m 8 --n 8 --k 8 --bench --reps 4294967297 --device sim",
       "--reps '4294967297' refused; expected an integer from 1 to 100000"},
      {"gemm --m 8x --n 8 --k 8 --device sim", "--m '8x' refused"},
      {"gemm --m +8 --n 8 --k 8 --device sim", "--m '+8' refused"},
      {"gemm --m ' 8' --n 8 --k 8 --device sim", "--m ' 8' refused"},
      {"gemm --m 8 --n 8 --k 8 --seed -1 --device sim", "--seed '-1' refused"},
      {"gemm --m 8 --n 8 --k 8 --beta 1e39 --device sim",
       "--beta '1e39' refused; it must fit a float"},
  };
  for (const std::string bad : {"nan", "inf", "-inf", "1e999", "0.5x"})
    cases.push_back({"gemm --m 8 --n 8 --k 8 --alpha " + bad + " --device sim",
                     "--alpha '" + bad + "' refused; expected a finite number"});
  expect_refused(cases);
}

TEST(BadInput, RepeatedAndStrayArgumentsAreRefused) {
  expect_refused({
      {"gemm --m 8 --m 16 --n 8 --k 8 --device sim",
       "--m given twice ('8' and '16'); give it once"},
      {"gemm --m 8 --n 8 --k 8 --check --check --device sim", "--check given twice"},
      {"gemm-amax --device sim --device cuda", "--device given twice ('sim' and 'cuda')"},
      {"gemm --m 8 --n 8 --k 8 --reps 3 --device sim",
       "--reps 3 without --bench: it sets how many runs --bench times"},
      {"gemm --m 8 --n 8 --k 8 extra --device sim", "unexpected argument 'extra'"},
      {"ptx --list extra", "unexpected argument 'extra'; see `warpforge ptx --help`"},
      {"ptx warp_gemm other", "unexpected argument 'other'"},
      {"demo --device sim --device sim", "--device given twice"},
      {"check a.ptx b.ptx", "unexpected argument 'b.ptx'"},
      {"fmt", "missing <in.ptx>; see `warpforge fmt --help`"},
      {"transpile x.ptx --main --main", "--main given twice"},
      {"amdgpu --list extra", "unexpected argument 'extra'"},
  });
  const Result version = run("--version extra");
  EXPECT_EQ(version.status, 2);
  EXPECT_NE(version.output.find("--version takes no arguments; got 'extra'"), std::string::npos);
}

TEST(BadInput, VersionPrintsTheProjectVersion) {
  const Result r = run("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, "warpforge " WARPFORGE_VERSION_TEXT "\n");
}

class BadFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("warpforge-bad-files-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(BadFiles, SaveOntoAnExistingFileIsRefusedAndTheFileKept) {
  const fs::path file = dir_ / "results";
  std::ofstream(file) << "keep me";
  for (const std::string command : {"gemm --m 8 --n 8 --k 8", "gemm-amax --m 32 --n 32 --k 64"})
    EXPECT_TRUE(
        refuses(command + " --device sim --save " + file.string(),
                "--save '" + file.string() + "' refused: it exists and is not a directory"));
  std::ifstream in(file);
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "keep me");
}

TEST_F(BadFiles, InputsThatAreNotRegularFilesAreRefusedAtOnce) {
  EXPECT_TRUE(refuses("fmt /dev/zero", "'/dev/zero' is not a regular file (a character device)"));
  EXPECT_TRUE(refuses("check " + dir_.string(), "is not a regular file (a directory)"));
  const fs::path fifo = dir_ / "pipe.ptx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Nobody writes to the FIFO: reading it would wait forever.
  EXPECT_TRUE(refuses("transpile " + fifo.string(), "is not a regular file (a FIFO)"));
  EXPECT_TRUE(refuses("fmt " + (dir_ / "absent.ptx").string(),
                      "cannot open '" + (dir_ / "absent.ptx").string() +
                          "' for reading: No such file or directory"));
}

TEST_F(BadFiles, APtxFileOverTheSizeLimitIsRefusedWithoutReadingIt) {
  const fs::path big = dir_ / "big.ptx";
  { std::ofstream(big) << "x"; }
  fs::resize_file(big, (std::uintmax_t{256} << 20) + 1);  // sparse: no disk used
  EXPECT_TRUE(refuses("fmt " + big.string(),
                      "has 268435457 bytes; PTX files up to 268435456 bytes are read"));
}

TEST_F(BadFiles, TranspileRefusesWhatCheckRejects) {
  const fs::path bad = dir_ / "nowhere.ptx";
  std::ofstream(bad) << ".version 7.0\n.target sm_80\n.address_size 64\n"
                        ".visible .entry k()\n{\n\tbra $nowhere;\n\tret;\n}\n";
  const Result check = run("check --no-ptxas " + bad.string());
  EXPECT_EQ(check.status, 1) << check.output;
  EXPECT_NE(check.output.find("$nowhere"), std::string::npos) << check.output;
  EXPECT_TRUE(refuses("transpile " + bad.string(),
                      "nowhere.ptx: function k: branches to $nowhere, which is not a label here"));
}

// The inputs of issue 42, item 5.
TEST(BadInput, LayoutExpressionsNestedTooDeeplyOrOverflowingAreRefused) {
  // Deeper than the PTX parser's 200 levels: refused, not a stack overflow,
  // and the 40,000-character expression is not echoed whole.
  EXPECT_TRUE(refuses("layout --expr '" + std::string(40000, '(') + "'",
                      "(40000 characters): at position 200 found '(', expected at most 200 levels "
                      "of nesting"));
  EXPECT_TRUE(refuses("layout --expr '" + std::string(201, '(') + "8" + std::string(201, ')') + "'",
                      "expected at most 200 levels of nesting"));
  const Result deep = run("layout --expr '" + std::string(200, '(') + "8" + std::string(200, ')') + "'");
  EXPECT_EQ(deep.status, 0) << deep.err;
  EXPECT_TRUE(refuses("layout --expr '(9223372036854775807,2):(1,1)'",
                      "Layout: shape (9223372036854775807,2) has more than 2^63 - 1 coordinates"));
  EXPECT_TRUE(refuses("layout --expr '(2,2):(9223372036854775807,9223372036854775807)'",
                      "Layout: shape (2,2) with stride (9223372036854775807,9223372036854775807) "
                      "reaches past the largest offset a signed 64-bit integer holds"));
}

TEST(BadInput, ListsAndOutputFilesRefuseStrayRepeatedOrEmptyArguments) {
  expect_refused({
      {"layout --list extra", "--list prints the catalogue and takes nothing else; got 'extra'"},
      {"layout --list --list", "--list given twice; give it once"},
      {"layout smem --svg a.svg --svg b.svg", "--svg given twice ('a.svg' and 'b.svg'); give it once"},
      {"layout smem --svg ''", "--svg '' refused: name the file to write"},
      {"ptx --list --target sm_80", "--list names every kernel; --target chooses one kernel's target"},
      {"amdgpu --list --target gfx90a", "--list names every kernel; --target chooses one kernel's target"},
      {"layout smem --svg /proc/x.svg", "--svg '/proc/x.svg' refused: cannot write the file: No such file or directory"},
  });
}

TEST(BadInput, Sm100aKernelsAreRefusedOnASimulatorStandingForAnotherGpu) {
  expect_refused({
      {"gemm --m 64 --n 64 --k 64 --kernel sm100a --device sim --target sm_80",
       "--kernel sm100a refused with --target sm_80: its instructions exist on sm_100a only; give "
       "--target sm_100a or leave --target out"},
      {"gemm-amax --kernel sm100a --device sim --target sm_80", "--kernel sm100a refused with --target sm_80"},
      {"gemm-amax --kernel sm100a --device sim --target sm_90a", "--kernel sm100a refused with --target sm_90a"},
  });
}

TEST_F(BadFiles, SaveToNoDirectoryOrOneThatCannotBeMadeIsRefusedBeforeTheGemmRuns) {
  expect_refused({
      {"gemm --m 8 --n 8 --k 8 --device sim --save ''", "--save '' refused: name a directory"},
      {"gemm-amax --device sim --save ''", "--save '' refused: name a directory"},
  });
  // A GEMM of minutes on the simulator: refused at once, before its first line
  // ("device: ...") is printed.
  const Result r = run("gemm --m 4096 --n 4096 --k 4096 --device sim --save /proc/x");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "warpforge gemm: --save '/proc/x' refused: cannot create the directory: No such file or directory\n");
  EXPECT_TRUE(refuses("gemm-amax --device sim --save /proc/x", "--save '/proc/x' refused: cannot create the directory"));
  const fs::path made = dir_ / "new" / "folder";
  const Result saved = run("gemm --m 8 --n 8 --k 8 --device sim --save " + made.string());
  EXPECT_EQ(saved.status, 0) << saved.err;
  EXPECT_TRUE(fs::exists(made / "d.npy"));
  EXPECT_FALSE(fs::exists(made / ".warpforge-write-test"));
}

// PTX that parses but that no ptxas takes: `check --no-ptxas` and `transpile`
// refuse it themselves, on stderr.
TEST_F(BadFiles, CheckWithoutPtxasAndTranspileRefuseWhatTheIsaLacks) {
  const std::string entry = ".visible .entry k(.param .u64 p)\n{\n\t.reg .f32 %f<2>;\n\t.reg .u64 %rd<2>;\n";
  const std::vector<std::pair<std::string, std::string>> files = {
      {".version 7.0\n.target sm_999\n.address_size 64\n" + entry + "\tret;\n}\n",
       ".target sm_999 is no target of the PTX ISA; accepted: sm_XX names such as sm_80"},
      {".version 99.9\n.target sm_80\n.address_size 64\n" + entry + "\tret;\n}\n",
       ".version 99.9 is no PTX ISA version; the published ones are 1.0-1.5, 2.0-2.3"},
      {".version 7.0\n.target sm_80\n.address_size 64\n" + entry +
           "\tld.param.u64 %rd0, [p];\n\tadd.u64 %rd1, %f0, %rd0;\n\tret;\n}\n",
       "function k: add.u64 operand 2 is %f0, a .f32 register; its type .u64 takes a 64-bit .b, .u "
       "or .s register (PTX ISA 6.1)"},
      {".version 7.0\n.target sm_80\n.address_size 64\n" + entry +
           "\tld.param.u64 %rd0, [p];\n\tst.global.u64 [%rd0], %f0;\n\tret;\n}\n",
       "function k: st.global.u64 operand 2 is %f0, a .f32 register; its type .u64 takes a register "
       "of at least 64 bits"},
      {".version 8.0\n.target sm_80\n.address_size 64\n" + entry + "\twgmma.fence.sync.aligned;\n\tret;\n}\n",
       "function k: wgmma.fence.sync.aligned: wgmma needs sm_90a; the module's .target is sm_80"},
      {".version 7.0\n.target sm_90a\n.address_size 64\n" + entry + "\tret;\n}\n",
       ".target sm_90a needs .version 8.0 or later; the module has .version 7.0"},
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    const fs::path file = dir_ / ("bad" + std::to_string(i) + ".ptx");
    std::ofstream(file) << files[i].first;
    EXPECT_TRUE(refuses("check --no-ptxas " + file.string(), file.string() + ": " + files[i].second));
    EXPECT_TRUE(refuses("transpile " + file.string(), file.string() + ": " + files[i].second));
  }
  // A word that is no opcode of the ISA does not parse: the reader names it.
  const fs::path misspelt = dir_ / "misspelt.ptx";
  std::ofstream(misspelt) << ".version 7.0\n.target sm_80\n.address_size 64\n" + entry +
                                 "\tfrobnicate.f32 %f0, %f1;\n\tret;\n}\n";
  for (const char* command : {"check --no-ptxas ", "transpile "})
    EXPECT_TRUE(refuses(command + misspelt.string(),
                        misspelt.string() + ":8:2: expected an instruction of the PTX ISA "
                                            "('frobnicate' is not a PTX opcode"));
}

TEST_F(BadFiles, OutputFilesNeedANameThatCanBeWritten) {
  const fs::path ok = dir_ / "ok.ptx";
  std::ofstream(ok) << ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
  expect_refused({
      {"transpile " + ok.string() + " -o ''", "-o '' refused: name the file to write"},
      {"transpile " + ok.string() + " -o " + dir_.string(), "-o '" + dir_.string() + "' refused: cannot write the file: Is a directory"},
      {"transpile " + ok.string() + " --name '1 bad'", "module name '1 bad' is not a C++ identifier"},
      {"amdgpu amd_gemm_128 -o ''", "-o '' refused: name the file to write"},
  });
}

TEST_F(BadFiles, ParseErrorsShowControlBytes) {
  const fs::path nul = dir_ / "nul.ptx";
  std::ofstream(nul, std::ios::binary) << std::string(16, '\0');
  EXPECT_TRUE(refuses("fmt " + nul.string(), "nul.ptx:1:1: expected a PTX token, found '\\x00'"));
}

}  // namespace
}  // namespace warpforge::cli::testing
