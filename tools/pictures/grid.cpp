#include "grid.hpp"

#include <algorithm>
#include <cmath>

#include "svg_writer.hpp"

namespace warpforge::pictures {

namespace {

// The hue of a colour index, in [0, 1): the grid's colours spread evenly.
double hue(const Grid& grid, int64_t colour) {
  const int64_t n = std::max<int64_t>(grid.colours, 1);
  return static_cast<double>(((colour % n) + n) % n) / static_cast<double>(n);
}

// A pastel of that hue in xterm's 6x6x6 colour cube (codes 16..231), so black
// text stays readable on it.
int xterm_code(double h) {
  const double s = 0.5;  // saturation; value is 1
  const double sector = h * 6.0;
  const double f = sector - std::floor(sector);
  const double p = 1 - s, q = 1 - s * f, t = 1 - s * (1 - f);
  double r = 1, g = 1, b = 1;
  switch (static_cast<int>(sector) % 6) {
    case 0:
      r = 1, g = t, b = p;
      break;
    case 1:
      r = q, g = 1, b = p;
      break;
    case 2:
      r = p, g = 1, b = t;
      break;
    case 3:
      r = p, g = q, b = 1;
      break;
    case 4:
      r = t, g = p, b = 1;
      break;
    default:
      r = 1, g = p, b = q;
  }
  auto level = [](double x) { return static_cast<int>(std::lround(x * 5)); };
  return 16 + 36 * level(r) + 6 * level(g) + level(b);
}

std::string pad_left(const std::string& s, size_t width) {
  return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
}

}  // namespace

Grid make_grid(std::string title, int64_t rows, int64_t cols) {
  Grid grid;
  grid.title = std::move(title);
  grid.rows = rows;
  grid.cols = cols;
  grid.cells.resize(static_cast<size_t>(rows * cols));
  return grid;
}

std::string to_terminal(const Grid& grid, bool ansi_colour) {
  size_t width = std::to_string(grid.cols - 1).size();
  for (const GridCell& cell : grid.cells) width = std::max(width, cell.label.size() + 2);
  const size_t margin = std::to_string(grid.rows - 1).size();
  std::string out = grid.title + "\n" + std::string(margin + 1, ' ');
  for (int64_t c = 0; c < grid.cols; ++c) out += " " + pad_left(std::to_string(c), width);
  out += "\n";
  for (int64_t r = 0; r < grid.rows; ++r) {
    out += pad_left(std::to_string(r), margin) + " ";
    for (int64_t c = 0; c < grid.cols; ++c) {
      const GridCell& cell = grid.at(r, c);
      const std::string text = cell.marked ? "[" + cell.label + "]" : cell.label;
      out += " ";
      if (ansi_colour) {
        out += "\x1b[30;48;5;" + std::to_string(xterm_code(hue(grid, cell.colour))) + "m" +
               pad_left(text, width) + "\x1b[0m";
      } else {
        out += pad_left(text, width);
      }
    }
    out += "\n";
  }
  for (const std::string& note : grid.notes) out += note + "\n";
  return out;
}

std::string to_svg(const Grid& grid) {
  size_t longest = 1;
  for (const GridCell& cell : grid.cells) longest = std::max(longest, cell.label.size());
  const double cell_w = std::max(28.0, 7.5 * static_cast<double>(longest) + 10);
  const double cell_h = 22, left = 40, top = 66, line = 16;
  size_t longest_note = 0;
  for (const std::string& note : grid.notes) longest_note = std::max(longest_note, note.size());
  const double width = std::max(
      {left + cell_w * grid.cols + 10, 8.8 * grid.title.size() + 20, 6.7 * longest_note + 20});
  const double height = top + cell_h * grid.rows + 10 + line * grid.notes.size() + 6;
  SvgWriter svg(width, height);
  svg.text({{"x", "10"}, {"y", "20"}, {"font-size", "14"}, {"font-weight", "bold"}}, grid.title);
  svg.text({{"x", "10"}, {"y", svg_number(top - 26)}, {"font-size", "10"}, {"fill", "#555"}},
           grid.row_name + " \xE2\x86\x93  " + grid.col_name + " \xE2\x86\x92");
  for (int64_t c = 0; c < grid.cols; ++c) {
    svg.text({{"x", svg_number(left + cell_w * (c + 0.5))},
              {"y", svg_number(top - 8)},
              {"font-size", "10"},
              {"text-anchor", "middle"},
              {"fill", "#555"}},
             std::to_string(c));
  }
  for (int64_t r = 0; r < grid.rows; ++r) {
    svg.text({{"x", svg_number(left - 6)},
              {"y", svg_number(top + cell_h * (r + 0.5) + 4)},
              {"font-size", "10"},
              {"text-anchor", "end"},
              {"fill", "#555"}},
             std::to_string(r));
    for (int64_t c = 0; c < grid.cols; ++c) {
      const GridCell& cell = grid.at(r, c);
      Attributes group = {
          {"class", "cell"}, {"data-row", std::to_string(r)}, {"data-col", std::to_string(c)}};
      for (const auto& [name, value] : cell.data)
        group.push_back({"data-" + name, std::to_string(value)});
      svg.open("g", group);
      const double x = left + cell_w * c, y = top + cell_h * r;
      svg.empty("rect", {{"x", svg_number(x)},
                         {"y", svg_number(y)},
                         {"width", svg_number(cell_w)},
                         {"height", svg_number(cell_h)},
                         {"fill", "hsl(" + svg_number(360 * hue(grid, cell.colour)) + ",70%,82%)"},
                         {"stroke", cell.marked ? "black" : "white"},
                         {"stroke-width", cell.marked ? "2" : "1"}});
      svg.text({{"x", svg_number(x + cell_w / 2)},
                {"y", svg_number(y + cell_h / 2 + 4)},
                {"font-size", "11"},
                {"text-anchor", "middle"}},
               cell.label);
      svg.close();
    }
  }
  for (size_t i = 0; i < grid.notes.size(); ++i) {
    svg.text({{"x", "10"},
              {"y", svg_number(top + cell_h * grid.rows + 10 + line * (i + 0.75))},
              {"font-size", "11"}},
             grid.notes[i]);
  }
  return svg.finish();
}

}  // namespace warpforge::pictures
