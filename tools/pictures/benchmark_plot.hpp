// Benchmark plots: TFLOP/s of warpforge and its peers over a list of GEMM
// shapes, under the roofline's two ceilings: the tensor-core rate, and each
// shape's bytes moved at the measured copy bandwidth (FLOPs / (bytes / BW)).
// The SVG is built from rows alone, so measurement (bench_gemm) and the
// recorded tables (docs/data/*.tsv, `warpforge plot`) draw it alike.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace warpforge::pictures {

struct PlotRow {
  std::string shape;  // "MxNxK"
  double flops = 0;   // 2 * M * N * K
  double bytes = 0;   // the least traffic to device memory: inputs read once, output written once
  std::vector<std::optional<double>> tflops;  // one per series; empty where not measured
};

struct BenchmarkPlot {
  std::string title;
  std::vector<std::string> series;  // "warpforge", "cuBLAS", ...
  std::vector<PlotRow> rows;
  double peak_tflops = 0;  // the tensor-core rate of the instruction the kernels use
  double copy_gbps = 0;    // measured device-to-device copy bandwidth, GB/s
  std::string note;        // one line under the plot: GPU, date, how measured

  // Throws Error unless there is at least one series and one row, every row
  // has one entry per series, and the rates, FLOPs and bytes are positive.
  void check() const;
  // The memory ceiling of a row: FLOPs / (bytes / copy bandwidth), TFLOP/s.
  double memory_ceiling_tflops(const PlotRow& row) const;
};

// 2 * M * N * K of an "MxNxK" shape; throws Error for another text.
double gemm_flops(const std::string& shape);

// The plot as SVG: shapes along x, TFLOP/s up y from 0; one polyline of
// circles per series (class "point", with data-series, data-shape and
// data-tflops), the tensor-core ceiling as a line of class "ceiling-tensor"
// and each shape's memory ceiling as a segment of class "ceiling-memory"
// (data-shape, data-tflops), drawn at the top when it lies above the plot.
std::string benchmark_plot_svg(const BenchmarkPlot& plot);

// The recorded-table format of docs/data/*.tsv:
//   # title: <text>          (also note, peak_tflops, copy_gbps)
//   shape<TAB>bytes<TAB><series 1><TAB>...
//   4096x4096x4096<TAB>100663296<TAB>805<TAB>801
// '-' marks a value not measured; other lines starting with '#' are comments.
// Throws Error naming the source, line and what was expected.
BenchmarkPlot read_benchmark_table(std::istream& in, const std::string& source);

}  // namespace warpforge::pictures
