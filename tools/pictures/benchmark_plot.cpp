#include "benchmark_plot.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "svg_writer.hpp"
#include "warpforge/error.hpp"

namespace warpforge::pictures {

void BenchmarkPlot::check() const {
  if (series.empty() || rows.empty()) {
    throw Error("benchmark plot '" + title + "': " + std::to_string(series.size()) +
                " series and " + std::to_string(rows.size()) +
                " shapes; it needs at least one of each");
  }
  if (!(peak_tflops > 0) || !(copy_gbps > 0)) {
    throw Error("benchmark plot '" + title + "': tensor-core rate " + svg_number(peak_tflops) +
                " TFLOP/s and copy bandwidth " + svg_number(copy_gbps) +
                " GB/s; both ceilings must be positive");
  }
  for (const PlotRow& row : rows) {
    if (row.tflops.size() != series.size()) {
      throw Error("benchmark plot '" + title + "': shape " + row.shape + " has " +
                  std::to_string(row.tflops.size()) + " values for " +
                  std::to_string(series.size()) + " series");
    }
    if (!(row.flops > 0) || !(row.bytes > 0)) {
      throw Error("benchmark plot '" + title + "': shape " + row.shape +
                  " needs positive FLOPs and bytes");
    }
    for (const auto& v : row.tflops) {
      if (v && !(*v >= 0 && std::isfinite(*v))) {
        throw Error("benchmark plot '" + title + "': shape " + row.shape + " has rate " +
                    svg_number(*v) + "; rates are finite and >= 0");
      }
    }
  }
}

double BenchmarkPlot::memory_ceiling_tflops(const PlotRow& row) const {
  return row.flops / (row.bytes / (copy_gbps * 1e9)) / 1e12;
}

double gemm_flops(const std::string& shape) {
  std::istringstream in(shape);
  long long m = 0, n = 0, k = 0;
  char x1 = 0, x2 = 0;
  in >> m >> x1 >> n >> x2 >> k;
  if (!in || x1 != 'x' || x2 != 'x' || m < 1 || n < 1 || k < 1 || in.peek() != EOF) {
    throw Error("shape '" + shape + "': expected MxNxK with M, N, K >= 1, e.g. 4096x4096x4096");
  }
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

namespace {

constexpr const char* kSeriesColours[] = {"#1f6fb4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};

// A round axis step (1, 2 or 5 times a power of ten) giving about 6 ticks.
double tick_step(double top) {
  const double raw = top / 6;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

}  // namespace

std::string benchmark_plot_svg(const BenchmarkPlot& plot) {
  plot.check();
  const double width = 860, height = 480;
  const double left = 70, right = width - 240, top = 50, bottom = height - 120;
  double highest = plot.peak_tflops;
  for (const PlotRow& row : plot.rows) {
    for (const auto& v : row.tflops) highest = std::max(highest, v.value_or(0));
  }
  const double step = tick_step(highest * 1.1);
  const double y_top = std::ceil(highest * 1.1 / step) * step;
  const size_t n = plot.rows.size();
  auto x_of = [&](size_t i) { return left + (right - left) * (i + 0.5) / n; };
  auto y_of = [&](double tflops) { return bottom - (bottom - top) * tflops / y_top; };

  SvgWriter svg(width, height);
  svg.text({{"x", "10"}, {"y", "24"}, {"font-size", "15"}, {"font-weight", "bold"}}, plot.title);
  // The y axis: grid lines and TFLOP/s labels.
  for (double t = 0; t <= y_top + step / 2; t += step) {
    svg.empty("line", {{"x1", svg_number(left)},
                       {"x2", svg_number(right)},
                       {"y1", svg_number(y_of(t))},
                       {"y2", svg_number(y_of(t))},
                       {"stroke", t == 0 ? "#000" : "#ddd"}});
    svg.text({{"x", svg_number(left - 6)},
              {"y", svg_number(y_of(t) + 4)},
              {"font-size", "11"},
              {"text-anchor", "end"}},
             svg_number(t));
  }
  svg.text({{"x", "16"},
            {"y", svg_number((top + bottom) / 2)},
            {"font-size", "12"},
            {"text-anchor", "middle"},
            {"transform", "rotate(-90 16 " + svg_number((top + bottom) / 2) + ")"}},
           "TFLOP/s");
  // The x axis: one slot per shape.
  for (size_t i = 0; i < n; ++i) {
    const std::string x = svg_number(x_of(i)), y = svg_number(bottom + 14);
    svg.text({{"x", x},
              {"y", y},
              {"font-size", "11"},
              {"text-anchor", "end"},
              {"transform", "rotate(-30 " + x + " " + y + ")"}},
             plot.rows[i].shape);
  }
  // The tensor-core ceiling across the plot; the memory ceiling of each
  // shape as a level segment over its slot (shapes are categories: a line
  // between them would mean nothing), its value written beside it, or at the
  // top with an arrow when it lies above the plot.
  svg.empty("line", {{"class", "ceiling-tensor"},
                     {"data-tflops", svg_number(plot.peak_tflops)},
                     {"x1", svg_number(left)},
                     {"x2", svg_number(right)},
                     {"y1", svg_number(y_of(plot.peak_tflops))},
                     {"y2", svg_number(y_of(plot.peak_tflops))},
                     {"stroke", "#555"},
                     {"stroke-width", "2"},
                     {"stroke-dasharray", "6 4"}});
  const double slot = (right - left) / n;
  for (size_t i = 0; i < n; ++i) {
    const double v = plot.memory_ceiling_tflops(plot.rows[i]);
    const double y = y_of(std::min(v, y_top));
    svg.empty("line", {{"class", "ceiling-memory"},
                       {"data-shape", plot.rows[i].shape},
                       {"data-tflops", svg_number(v)},
                       {"x1", svg_number(x_of(i) - 0.4 * slot)},
                       {"x2", svg_number(x_of(i) + 0.4 * slot)},
                       {"y1", svg_number(y)},
                       {"y2", svg_number(y)},
                       {"stroke", "#b8860b"},
                       {"stroke-width", "2"},
                       {"stroke-dasharray", v > y_top ? "2 3" : "6 4"}});
    svg.text({{"x", svg_number(x_of(i))},
              {"y", svg_number(y - 5)},
              {"font-size", "10"},
              {"text-anchor", "middle"},
              {"fill", "#8b6508"}},
             svg_number(std::round(v)) + (v > y_top ? " \xE2\x86\x91" : ""));
  }
  // The series: a line through the measured points, a circle on each.
  for (size_t s = 0; s < plot.series.size(); ++s) {
    const std::string colour = kSeriesColours[s % std::size(kSeriesColours)];
    std::string points;
    for (size_t i = 0; i < n; ++i) {
      if (const auto& v = plot.rows[i].tflops[s]) {
        points += (points.empty() ? "" : " ") + svg_number(x_of(i)) + "," + svg_number(y_of(*v));
      }
    }
    svg.empty("polyline",
              {{"points", points}, {"fill", "none"}, {"stroke", colour}, {"stroke-width", "1.5"}});
    for (size_t i = 0; i < n; ++i) {
      if (const auto& v = plot.rows[i].tflops[s]) {
        svg.empty("circle", {{"class", "point"},
                             {"data-series", plot.series[s]},
                             {"data-shape", plot.rows[i].shape},
                             {"data-tflops", svg_number(*v)},
                             {"cx", svg_number(x_of(i))},
                             {"cy", svg_number(y_of(*v))},
                             {"r", "4"},
                             {"fill", colour}});
      }
    }
  }
  // The legend, right of the plot.
  double ly = top + 6;
  auto legend = [&](const std::string& colour, const std::string& dash, const std::string& label) {
    svg.empty("line", {{"x1", svg_number(right + 16)},
                       {"x2", svg_number(right + 40)},
                       {"y1", svg_number(ly)},
                       {"y2", svg_number(ly)},
                       {"stroke", colour},
                       {"stroke-width", "2"},
                       {"stroke-dasharray", dash}});
    svg.text({{"x", svg_number(right + 46)}, {"y", svg_number(ly + 4)}, {"font-size", "11"}},
             label);
    ly += 20;
  };
  for (size_t s = 0; s < plot.series.size(); ++s) {
    legend(kSeriesColours[s % std::size(kSeriesColours)], "none", plot.series[s]);
  }
  legend("#555", "6 4", "tensor cores " + svg_number(plot.peak_tflops) + " TFLOP/s");
  legend("#b8860b", "6 4", "bytes at " + svg_number(plot.copy_gbps) + " GB/s");
  if (!plot.note.empty()) {
    svg.text({{"x", "10"}, {"y", svg_number(height - 10)}, {"font-size", "11"}, {"fill", "#444"}},
             plot.note);
  }
  return svg.finish();
}

namespace {

double number_field(const std::string& text, const std::string& where) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) throw Error(where + ": '" + text + "' is not a number");
  return v;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
    fields.push_back(line.substr(start, tab - start));
  }
  fields.push_back(line.substr(start));
  return fields;
}

}  // namespace

BenchmarkPlot read_benchmark_table(std::istream& in, const std::string& source) {
  BenchmarkPlot plot;
  std::string line;
  bool header = false;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = source + ":" + std::to_string(number);
    if (line.empty()) continue;
    if (line[0] == '#') {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const size_t start = line.find_first_not_of("# ");  // at or before the colon
      const std::string key = line.substr(start, colon - start);
      const std::string value = line.substr(std::min(line.size(), colon + 2));
      if (key == "title")
        plot.title = value;
      else if (key == "note")
        plot.note = value;
      else if (key == "peak_tflops")
        plot.peak_tflops = number_field(value, where);
      else if (key == "copy_gbps")
        plot.copy_gbps = number_field(value, where);
      continue;
    }
    const std::vector<std::string> fields = split_tabs(line);
    if (!header) {
      if (fields.size() < 3 || fields[0] != "shape" || fields[1] != "bytes") {
        throw Error(where + ": expected the header 'shape<TAB>bytes<TAB><series>...'");
      }
      plot.series.assign(fields.begin() + 2, fields.end());
      header = true;
      continue;
    }
    if (fields.size() != plot.series.size() + 2) {
      throw Error(where + ": " + std::to_string(fields.size()) + " fields; the header has " +
                  std::to_string(plot.series.size() + 2));
    }
    PlotRow row{fields[0], gemm_flops(fields[0]), number_field(fields[1], where), {}};
    for (size_t i = 2; i < fields.size(); ++i) {
      if (fields[i] == "-")
        row.tflops.push_back(std::nullopt);
      else
        row.tflops.push_back(number_field(fields[i], where));
    }
    plot.rows.push_back(std::move(row));
  }
  if (!header) throw Error(source + ": no header line 'shape<TAB>bytes<TAB><series>...'");
  plot.check();
  return plot;
}

}  // namespace warpforge::pictures
