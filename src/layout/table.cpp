#include "warpforge/layout/table.hpp"

#include <algorithm>

#include "warpforge/error.hpp"

namespace warpforge::layout {

namespace {
std::string padded(int64_t value, size_t width) {
  std::string s = std::to_string(value);
  return std::string(width - std::min(width, s.size()), ' ') + s;
}
}  // namespace

std::string to_table(const Layout& layout) {
  if (layout.rank() > 2) {
    throw LayoutError("to_table: " + to_string(layout) + " has rank " +
                      std::to_string(layout.rank()) +
                      "; only rank 1 and 2 layouts print as tables");
  }
  int64_t rows = layout.mode(0).size();
  int64_t cols = layout.rank() == 2 ? layout.mode(1).size() : 1;
  auto at = [&](int64_t r, int64_t c) { return layout.rank() == 2 ? layout(r, c) : layout(r); };
  size_t width = std::to_string(std::max(layout.cosize() - 1, std::max(rows, cols) - 1)).size() + 1;
  size_t label = std::to_string(rows - 1).size();
  std::string out = to_string(layout) + "\n" + std::string(label + 2, ' ');
  for (int64_t c = 0; c < cols; ++c) out += padded(c, width);
  out += "\n" + std::string(label + 1, ' ') + "+" + std::string(width * cols, '-') + "\n";
  for (int64_t r = 0; r < rows; ++r) {
    out += padded(r, label) + " |";
    for (int64_t c = 0; c < cols; ++c) out += padded(at(r, c), width);
    out += "\n";
  }
  return out;
}

}  // namespace warpforge::layout
