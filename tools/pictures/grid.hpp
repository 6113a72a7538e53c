// Grid: the picture every layout drawing becomes, a rows x cols table of
// labelled, coloured cells, written to a terminal or to SVG. Each cell also
// carries named integers (thread, value, bank, ...) that the SVG keeps as
// data-* attributes, so a reader (or a test) gets the mapping back exactly.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace warpforge::pictures {

struct GridCell {
  std::string label;                                  // "T5V3", "17", ...
  int64_t colour = 0;                                 // index into the palette, mod its size
  std::vector<std::pair<std::string, int64_t>> data;  // ("thread", 5), ("value", 3), ...
  bool marked = false;                                // drawn with a heavy border / brackets
};

struct Grid {
  std::string title;
  std::string row_name = "row";  // what the row and column indices count
  std::string col_name = "col";
  int64_t rows = 0, cols = 0;
  std::vector<GridCell> cells;     // row-major, rows * cols
  int64_t colours = 8;             // distinct colours the cells use (hues spread evenly)
  std::vector<std::string> notes;  // lines printed under the grid

  GridCell& at(int64_t row, int64_t col) { return cells[row * cols + col]; }
  const GridCell& at(int64_t row, int64_t col) const { return cells[row * cols + col]; }
};

// A grid of rows x cols default cells titled `title`.
Grid make_grid(std::string title, int64_t rows, int64_t cols);

// The grid as text: a header of column indices, each row its index and its
// cells right-aligned; marked cells in brackets. With `ansi_colour`, each
// cell's background is its colour (256-colour escape codes).
std::string to_terminal(const Grid& grid, bool ansi_colour);

// The grid as an SVG document: one <g class="cell"> per cell holding a
// coloured <rect> and its label, with data-row, data-col and each data entry
// as data-<name> attributes; the notes below it.
std::string to_svg(const Grid& grid);

}  // namespace warpforge::pictures
