// `warpforge plot`: a recorded benchmark table (docs/data/*.tsv) drawn as the
// SVG that `bench_gemm --plot` writes for a live run.
#include <fstream>
#include <iostream>

#include "command.hpp"
#include "pictures/benchmark_plot.hpp"
#include "warpforge/error.hpp"

namespace warpforge::cli {
namespace {

int run_plot(const std::vector<std::string>& args) {
  if (args.size() != 3 || args[1] != "-o") {
    std::cerr << "usage: warpforge plot <table.tsv> -o <plot.svg>\n";
    return 2;
  }
  std::ifstream in(args[0]);
  if (!in) throw Error(args[0] + ": cannot open the table");
  const std::string svg = pictures::benchmark_plot_svg(pictures::read_benchmark_table(in, args[0]));
  std::ofstream out(args[2]);
  out << svg;
  out.close();
  if (!out) throw Error("-o " + args[2] + ": cannot write the file");
  std::cout << "wrote " << args[2] << "\n";
  return 0;
}

const Registration registration({
    .name = "plot",
    .summary = "draw a recorded benchmark table as an SVG plot with its roofline",
    .help = "usage: warpforge plot <table.tsv> -o <plot.svg>\n\n"
            "Draws TFLOP/s per shape for each series of the table (warpforge and its peers)\n"
            "under the roofline's two ceilings: the tensor-core rate, and each shape's bytes\n"
            "over the measured copy bandwidth. The table (docs/data/*.tsv) has the header\n"
            "`shape<TAB>bytes<TAB><series>...`, one row per MxNxK shape ('-' where a series\n"
            "was not measured), and '# title:', '# note:', '# peak_tflops:' and\n"
            "'# copy_gbps:' lines. scripts/draw-docs-pictures.sh redraws docs/img from\n"
            "docs/data with it; `bench_gemm --plot FILE.svg` draws a live run alike.\n",
    .run = run_plot,
});

}  // namespace
}  // namespace warpforge::cli
