#include "layout_grids.hpp"

#include <algorithm>

#include "warpforge/error.hpp"

namespace warpforge::pictures {

using layout::Axis;
using layout::AxisPoint;

namespace {

// Threads per unit of each thread axis: a warpgroup is 4 warps of 32 lanes.
int64_t thread_of(const AxisPoint& owner) {
  auto get = [&](Axis a) { return owner.count(a) ? owner.at(a) : 0; };
  return get(Axis::lane) + 32 * get(Axis::warp) + 128 * get(Axis::warpgroup);
}

std::string label_of(const layout::NamedLayout& l, const AxisPoint& owner) {
  std::string label = "T" + std::to_string(thread_of(owner));
  if (owner.count(Axis::value)) label += "V" + std::to_string(owner.at(Axis::value));
  for (Axis a : l.domain()) {
    if (a != Axis::lane && a != Axis::warp && a != Axis::warpgroup && a != Axis::value) {
      label += " " + layout::to_string(a) + std::to_string(owner.at(a));
    }
  }
  return label;
}

}  // namespace

Grid thread_value_grid(const layout::NamedLayout& l) {
  const auto& codomain = l.codomain();
  if (codomain.size() != 2 || codomain[0].axis != Axis::row || codomain[1].axis != Axis::col) {
    std::string axes;
    for (const auto& e : codomain) axes += (axes.empty() ? "" : ", ") + layout::to_string(e.axis);
    throw LayoutError(l.name() + ": a thread-value picture needs the codomain (row, col), not (" +
                      axes + ")");
  }
  const std::string expression = layout::to_string(l.layout());
  Grid grid = make_grid(l.name() == expression ? expression : l.name() + "  " + expression,
                        codomain[0].extent, codomain[1].extent);
  std::vector<int64_t> owners(grid.cells.size(), 0);
  int64_t threads = 1;
  // Walk the domain colexicographically (first axis fastest), as the layout's
  // own 1-D index does, so the first owner is the lowest index.
  for (int64_t index = 0; index < l.layout().size(); ++index) {
    AxisPoint owner;
    int64_t rest = index;
    for (Axis a : l.domain()) {
      owner[a] = rest % l.extent(a);
      rest /= l.extent(a);
    }
    const AxisPoint at = l(owner);
    GridCell& cell = grid.at(at.at(Axis::row), at.at(Axis::col));
    const int64_t thread = thread_of(owner);
    threads = std::max(threads, thread + 1);
    if (owners[&cell - grid.cells.data()]++ == 0) {
      cell.label = label_of(l, owner);
      cell.colour = thread;
      cell.data = {{"thread", thread}};
      if (owner.count(Axis::value)) cell.data.push_back({"value", owner.at(Axis::value)});
    }
  }
  int64_t unreached = 0, shared = 0;
  for (size_t i = 0; i < owners.size(); ++i) {
    if (owners[i] == 0) {
      grid.cells[i].label = "-";
      ++unreached;
    } else if (owners[i] > 1) {
      grid.cells[i].label += "+" + std::to_string(owners[i] - 1);
      ++shared;
    }
  }
  grid.colours = std::min<int64_t>(threads, 32);
  grid.notes.push_back("T = thread (lane + 32 * warp), V = value: the slot in the operand list");
  if (unreached || shared) {
    grid.notes.push_back(std::to_string(unreached) + " elements held by no thread, " +
                         std::to_string(shared) + " by several (+n: n more owners)");
  }
  return grid;
}

Grid offset_grid(const layout::Layout& l) {
  if (l.rank() > 2) {
    throw LayoutError("layout " + layout::to_string(l) + " has rank " + std::to_string(l.rank()) +
                      "; a grid draws rank 1 or 2 (group modes into two)");
  }
  const layout::Layout rows = l.mode(0);
  const int64_t cols = l.rank() == 2 ? l.mode(1).size() : 1;
  Grid grid = make_grid(layout::to_string(l), rows.size(), cols);
  for (int64_t r = 0; r < grid.rows; ++r) {
    for (int64_t c = 0; c < grid.cols; ++c) {
      const int64_t offset = l.rank() == 2 ? l(r, c) : l(r);
      GridCell& cell = grid.at(r, c);
      cell.label = std::to_string(offset);
      cell.colour = offset;
      cell.data = {{"offset", offset}};
    }
  }
  grid.colours = std::min<int64_t>(std::max<int64_t>(l.cosize(), 1), 32);
  grid.notes.push_back("cell (i, j) holds the offset of coordinate (i, j)");
  return grid;
}

}  // namespace warpforge::pictures
