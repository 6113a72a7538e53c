// The benchmark plot drawn from synthetic rows and read back: one point per
// measured value at its height, the two ceilings at theirs; the table format
// and its refusals; and docs/img's plots equal to what docs/data redraws.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pictures/benchmark_plot.hpp"
#include "pictures/docs_image.hpp"
#include "pictures/xml_reader.hpp"
#include "warpforge/error.hpp"

namespace warpforge::pictures {
namespace {

using testing::parse_xml;

BenchmarkPlot synthetic() {
  BenchmarkPlot p;
  p.title = "synthetic";
  p.series = {"ours", "peer"};
  p.peak_tflops = 1000;
  p.copy_gbps = 4000;
  // 4096^3 (compute-bound) and 128x8192x8192 (memory-bound: 512 TFLOP/s ceiling
  // at 4000 GB/s for 2 * (128*8192*2 + 8192*8192) bytes).
  p.rows = {{"4096x4096x4096", gemm_flops("4096x4096x4096"), 3.0 * 4096 * 4096 * 2, {800.0, 790.0}},
            {"128x8192x8192",
             gemm_flops("128x8192x8192"),
             2.0 * (2 * 128 * 8192 + 8192.0 * 8192),
             {430.0, std::nullopt}}};
  return p;
}

double attr(const testing::XmlElement& e, const std::string& key) {
  return std::stod(e.attribute(key));
}

TEST(BenchmarkPlot, PointsSitAtTheirRates) {
  const BenchmarkPlot plot = synthetic();
  const auto svg = parse_xml(benchmark_plot_svg(plot));
  const auto points = svg.all("circle", "point");
  ASSERT_EQ(points.size(), 3u);  // the peer's missing value is not drawn
  EXPECT_EQ(points[0]->attribute("data-series"), "ours");
  EXPECT_EQ(points[0]->attribute("data-shape"), "4096x4096x4096");
  EXPECT_EQ(attr(*points[0], "data-tflops"), 800);
  EXPECT_EQ(points[2]->attribute("data-series"), "peer");
  EXPECT_EQ(attr(*points[2], "data-tflops"), 790);
  // y is linear in TFLOP/s: find the line through two points and check the
  // rest, and the tensor-core ceiling, lie on it.
  const double y800 = attr(*points[0], "cy"), y430 = attr(*points[1], "cy");
  const double per_tflop = (y430 - y800) / (800 - 430);
  ASSERT_GT(per_tflop, 0);
  auto y_of = [&](double v) { return y800 + (800 - v) * per_tflop; };
  EXPECT_NEAR(attr(*points[2], "cy"), y_of(790), 0.02);
  const auto tensor = svg.all("line", "ceiling-tensor");
  ASSERT_EQ(tensor.size(), 1u);
  EXPECT_EQ(attr(*tensor[0], "data-tflops"), 1000);
  EXPECT_NEAR(attr(*tensor[0], "y1"), y_of(1000), 0.02);
  // Same shape, same x.
  EXPECT_EQ(attr(*points[0], "cx"), attr(*points[2], "cx"));
  EXPECT_LT(attr(*points[0], "cx"), attr(*points[1], "cx"));
}

TEST(BenchmarkPlot, MemoryCeilingIsBytesOverBandwidth) {
  const BenchmarkPlot plot = synthetic();
  const auto svg = parse_xml(benchmark_plot_svg(plot));
  const auto memory = svg.all("line", "ceiling-memory");
  ASSERT_EQ(memory.size(), 2u);
  // 128x8192x8192: 17.18 GFLOP over 138.4 MB at 4 TB/s = 34.6 us: 496.5 TFLOP/s.
  const double flops = 2.0 * 128 * 8192 * 8192, bytes = 2.0 * (2 * 128 * 8192 + 8192.0 * 8192);
  EXPECT_NEAR(attr(*memory[1], "data-tflops"), flops / (bytes / 4000e9) / 1e12, 0.01);
  EXPECT_NEAR(attr(*memory[1], "data-tflops"), 496.5, 0.1);
  EXPECT_EQ(memory[1]->attribute("data-shape"), "128x8192x8192");
  // 4096^3's memory ceiling (~5461) is far above the plot: drawn at its top,
  // dotted, its value written with an arrow.
  EXPECT_NEAR(attr(*memory[0], "data-tflops"), 5461.33, 0.01);
  EXPECT_LT(attr(*memory[0], "y1"), attr(*svg.all("line", "ceiling-tensor")[0], "y1"));
  bool labelled = false;
  for (const auto* t : svg.all("text")) labelled |= t->text == "5461 \xE2\x86\x91";
  EXPECT_TRUE(labelled);
}

TEST(BenchmarkPlot, RefusesInconsistentRows) {
  BenchmarkPlot p = synthetic();
  p.rows[1].tflops.pop_back();
  EXPECT_THROW(benchmark_plot_svg(p), Error);
  p = synthetic();
  p.copy_gbps = 0;
  try {
    benchmark_plot_svg(p);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(
        e.what(),
        "benchmark plot 'synthetic': tensor-core rate 1000 TFLOP/s and copy bandwidth 0 GB/s; "
        "both ceilings must be positive");
  }
  p = synthetic();
  p.rows[0].tflops[0] = -1.0;
  EXPECT_THROW(benchmark_plot_svg(p), Error);
  EXPECT_THROW(gemm_flops("4096x4096"), Error);
  EXPECT_THROW(gemm_flops("4096x4096x0"), Error);
  EXPECT_EQ(gemm_flops("2x3x4"), 48);
}

TEST(BenchmarkTable, ReadsHeaderRowsAndGaps) {
  std::istringstream in(
      "# a comment: with a colon\n# title: T\n# note: N\n# peak_tflops: 990\n# copy_gbps: 4100\n"
      "shape\tbytes\tours\tpeer\n2x3x4\t100\t1.5\t-\n");
  const BenchmarkPlot p = read_benchmark_table(in, "t.tsv");
  EXPECT_EQ(p.title, "T");
  EXPECT_EQ(p.note, "N");
  EXPECT_EQ(p.peak_tflops, 990);
  EXPECT_EQ(p.copy_gbps, 4100);
  ASSERT_EQ(p.rows.size(), 1u);
  EXPECT_EQ(p.rows[0].flops, 48);
  EXPECT_EQ(p.rows[0].bytes, 100);
  EXPECT_EQ(p.rows[0].tflops[0], 1.5);
  EXPECT_FALSE(p.rows[0].tflops[1]);
}

TEST(BenchmarkTable, RefusesNamingTheLine) {
  auto refusal = [](const std::string& text) -> std::string {
    std::istringstream in(text);
    try {
      read_benchmark_table(in, "t.tsv");
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  const std::string head = "# peak_tflops: 990\n# copy_gbps: 4100\nshape\tbytes\tours\n";
  EXPECT_EQ(refusal(head + "2x3x4\t100\t1.5\t2\n"), "t.tsv:4: 4 fields; the header has 3");
  EXPECT_EQ(refusal(head + "2x3x4\t100\tfast\n"), "t.tsv:4: 'fast' is not a number");
  EXPECT_EQ(refusal("shape\tours\n"),
            "t.tsv:1: expected the header 'shape<TAB>bytes<TAB><series>...'");
  EXPECT_EQ(refusal("# title: x\n"), "t.tsv: no header line 'shape<TAB>bytes<TAB><series>...'");
}

// docs/img/<name>.svg is what `warpforge plot docs/data/<name>.tsv` draws
// (scripts/draw-docs-pictures.sh), so the committed plots show the committed data.
TEST(BenchmarkTable, DocsPlotsAreRedrawnFromDocsData) {
  int tables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::docs_dir() / "data")) {
    if (entry.path().extension() != ".tsv") continue;
    ++tables;
    std::ifstream in(entry.path());
    const std::string image = entry.path().stem().string() + ".svg";
    EXPECT_EQ(testing::docs_image(image),
              benchmark_plot_svg(read_benchmark_table(in, entry.path().string())))
        << "docs/img/" << image
        << " is not what its table draws: run scripts/draw-docs-pictures.sh";
  }
  EXPECT_GE(tables, 1);
}

}  // namespace
}  // namespace warpforge::pictures
