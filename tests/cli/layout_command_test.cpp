// `warpforge layout` and `warpforge plot` run as a user runs them: the
// terminal grid (uncoloured, since the test's stdout is a pipe), the SVG
// files they write, and their refusals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pictures/xml_reader.hpp"
#include "run_cli.hpp"

namespace warpforge::cli::testing {
namespace {

namespace fs = std::filesystem;

class LayoutCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("warpforge-layout-cli-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(LayoutCommand, ListNamesEveryAtomAndTheOtherPictures) {
  const Result r = run("layout --list");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* name :
       {"mma.m16n8k8.A", "mma.m16n8k16.B", "mma.m16n8k32.C", "ldmatrix.x4.trans", "wgmma.m64k16.A",
        "wgmma.m64n64k16.D", "mfma.32x32x8.C", "smem", "--expr"}) {
    EXPECT_NE(("\n" + r.output).find(std::string("\n") + name + " "), std::string::npos)
        << name << "\n"
        << r.output;
  }
}

TEST_F(LayoutCommand, DrawsAnAtomInThePlainTerminal) {
  const Result r = run("layout mma.m16n8k16.A");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << "colour on a pipe";
  // Row 8 of A: groupID 0 holds a2, a3 (cols 0-7) and a6, a7 (cols 8-15).
  EXPECT_NE(
      r.output.find("\n 8     T0V2    T0V3    T1V2    T1V3    T2V2    T2V3    T3V2    T3V3    "
                    "T0V6    T0V7"),
      std::string::npos)
      << r.output;
}

TEST_F(LayoutCommand, WritesAnSvgWithOneCellPerElement) {
  const fs::path svg = dir_ / "a.svg";
  const Result r = run("layout ldmatrix.x4 --svg " + svg.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(32 x 8 cells)"), std::string::npos) << r.output;
  const auto doc = pictures::testing::parse_xml(read(svg));
  const auto cells = doc.all("g", "cell");
  ASSERT_EQ(cells.size(), 256u);
  // Stacked row 8 is matrix 1's row 0: register 1 of lanes 0-3, value 2 and 3.
  for (const auto* c : cells) {
    if (c->attribute("data-row") == "8" && c->attribute("data-col") == "3") {
      EXPECT_EQ(c->attribute("data-thread"), "1");
      EXPECT_EQ(c->attribute("data-value"), "3");
    }
  }
}

TEST_F(LayoutCommand, DrawsAnExpression) {
  const Result r = run("layout --expr '((8,4),(2,2)):((4,1),(32,64))'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\n 9      5    37    69   101\n"), std::string::npos) << r.output;
  const Result tv = run("layout --expr '(32,4):(1,32)' --tv 32x4");
  ASSERT_EQ(tv.status, 0) << tv.output;
  EXPECT_NE(tv.output.find("\n31    T31V0   T31V1   T31V2   T31V3\n"), std::string::npos)
      << tv.output;
}

TEST_F(LayoutCommand, CountsBankConflicts) {
  const Result swizzled = run("layout smem");
  ASSERT_EQ(swizzled.status, 0) << swizzled.output;
  EXPECT_NE(swizzled.output.find("4 wavefronts (0 beyond one per phase), worst 1-way"),
            std::string::npos)
      << swizzled.output;
  const Result plain = run("layout smem --swizzle none --access cols:16");
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_NE(plain.output.find("32 wavefronts (28 beyond one per phase), worst 8-way"),
            std::string::npos)
      << plain.output;
}

TEST_F(LayoutCommand, RefusesWithTheReason) {
  EXPECT_TRUE(
      refuses("layout --expr '(4,8:(1,4)'",
              "layout expression \"(4,8:(1,4)\": at position 4 found ':', expected ',' or ')'"));
  EXPECT_TRUE(refuses("layout --expr '(4,8):(1,(2,2))'", "not congruent"));
  EXPECT_TRUE(refuses("layout mma.m16n8k4.A", "no atom named 'mma.m16n8k4.A'; the atoms are:"));
  EXPECT_TRUE(refuses("layout", "what to draw? name an atom"));
  EXPECT_TRUE(refuses("layout mma.m16n8k8.A mma.m16n8k8.B", "two layouts named"));
  EXPECT_TRUE(refuses("layout mma.m16n8k8.A --expr 8", "both --expr and 'mma.m16n8k8.A' given"));
  EXPECT_TRUE(
      refuses("layout smem --swizzle 16B", "--swizzle '16B' refused; accepted: none, 32B, 64B, 128B"));
  EXPECT_TRUE(
      refuses("layout smem --access diagonal", "access pattern 'diagonal'; accepted: ldmatrix"));
  EXPECT_TRUE(refuses("layout smem --rows 0", "--rows '0' refused; expected an integer from 1 to 999999999"));
  EXPECT_TRUE(
      refuses("layout mma.m16n8k8.A --swizzle none", "--swizzle describes the shared tile"));
  EXPECT_TRUE(refuses("layout mma.m16n8k8.A --tv 4x4", "--tv describes an --expr layout"));
  EXPECT_TRUE(refuses("layout --expr 8 --tv 4", "--tv '4' refused; expected MxN"));
  EXPECT_TRUE(refuses("layout --expr '(8,2):(1,8)' --tv 4x4 --axes lane,thread",
                      "'thread' is not a thread or value axis"));
  EXPECT_TRUE(
      refuses("layout --expr '(1000,1000)'", "1000000 cells; the picture draws at most 65536"));
  EXPECT_TRUE(refuses("layout --frobnicate", "unexpected argument '--frobnicate'; see `warpforge layout --help`"));
  EXPECT_TRUE(
      refuses("layout mma.m16n8k8.A --svg /nonexistent-dir/a.svg", "cannot write the file"));
}

TEST_F(LayoutCommand, PlotDrawsATable) {
  const fs::path table = dir_ / "t.tsv", svg = dir_ / "t.svg";
  std::ofstream(table) << "# title: t\n# peak_tflops: 990\n# copy_gbps: 4100\nshape\tbytes\tours\n"
                          "4096x4096x4096\t100663296\t805\n";
  const Result r = run("plot " + table.string() + " -o " + svg.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto doc = pictures::testing::parse_xml(read(svg));
  ASSERT_EQ(doc.all("circle", "point").size(), 1u);
  EXPECT_EQ(doc.all("circle", "point")[0]->attribute("data-tflops"), "805");
  EXPECT_TRUE(refuses("plot " + (dir_ / "none.tsv").string() + " -o " + svg.string(),
                      "cannot open '" + (dir_ / "none.tsv").string() + "' for reading: No such file or directory"));
  std::ofstream(table) << "shape\tbytes\tours\n4096x4096\t1\t2\n";
  EXPECT_TRUE(refuses("plot " + table.string() + " -o " + svg.string(),
                      "shape '4096x4096': expected MxNxK with M, N, K >= 1"));
  EXPECT_TRUE(refuses("plot", "missing <table.tsv>; see `warpforge plot --help`"));
  EXPECT_TRUE(refuses("plot " + table.string(), "-o <plot.svg> is required: the SVG file to write"));
  EXPECT_TRUE(refuses("plot " + table.string() + " -o a.svg -o b.svg", "-o given twice ('a.svg' and 'b.svg')"));
  EXPECT_TRUE(refuses("plot " + table.string() + " -o ''", "-o '' refused: name the file to write"));
  // A device that never ends: refused at once instead of read forever.
  EXPECT_TRUE(refuses("plot /dev/zero -o " + svg.string(), "'/dev/zero' is not a regular file (a character device)"));
}

}  // namespace
}  // namespace warpforge::cli::testing
