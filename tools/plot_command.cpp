// `warpforge plot`: a recorded benchmark table (docs/data/*.tsv) drawn as the
// SVG that `bench_gemm --plot` writes for a live run.
#include <iostream>
#include <sstream>

#include "arguments.hpp"
#include "command.hpp"
#include "command_files.hpp"
#include "pictures/benchmark_plot.hpp"
#include "warpforge/error.hpp"

namespace warpforge::cli::plot_command {
namespace {

// A table is a few kilobytes; far larger is no table.
constexpr std::size_t kMaxTableBytes = std::size_t{16} << 20;

int run_plot(const std::vector<std::string>& raw) {
  Arguments args("plot", raw);
  const auto output = args.value("-o");
  const std::string table = args.positionals(1, 1, "<table.tsv>")[0];
  args.finish();
  if (!output) throw Error("-o <plot.svg> is required: the SVG file to write");
  require_file_name("-o", *output);
  std::istringstream in(read_regular_file(table, kMaxTableBytes, "tables"));
  write_named_file("-o", *output, pictures::benchmark_plot_svg(pictures::read_benchmark_table(in, table)));
  std::cout << "wrote " << *output << "\n";
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
}  // namespace warpforge::cli::plot_command
