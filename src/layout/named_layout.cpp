#include "warpforge/layout/named_layout.hpp"

#include <algorithm>
#include <set>

#include "warpforge/error.hpp"
#include "warpforge/layout/composition.hpp"
#include "warpforge/layout/inverse.hpp"

namespace warpforge::layout {

std::string to_string(Axis axis) {
  switch (axis) {
    case Axis::lane:
      return "lane";
    case Axis::warp:
      return "warp";
    case Axis::warpgroup:
      return "warpgroup";
    case Axis::value:
      return "value";
    case Axis::row:
      return "row";
    case Axis::col:
      return "col";
    case Axis::offset:
      return "offset";
  }
  return "?";
}

namespace {

int64_t box_size(const std::vector<AxisExtent>& box) {
  int64_t n = 1;
  for (const AxisExtent& a : box) n *= a.extent;
  return n;
}

std::string axes_text(const std::vector<Axis>& axes) {
  std::string s;
  for (Axis a : axes) s += (s.empty() ? "" : ", ") + to_string(a);
  return "{" + s + "}";
}

// Colexicographic index of `point` in the box named by `axes` with `extents`.
int64_t index_in(const std::string& who, const std::vector<Axis>& axes,
                 const std::vector<int64_t>& extents, const AxisPoint& point) {
  if (point.size() != axes.size()) {
    std::vector<Axis> given;
    for (const auto& [axis, c] : point) given.push_back(axis);
    throw LayoutError(who + ": point with axes " + axes_text(given) + "; expected exactly " +
                      axes_text(axes));
  }
  int64_t index = 0, scale = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    auto it = point.find(axes[i]);
    if (it == point.end()) {
      throw LayoutError(who + ": axis " + to_string(axes[i]) + " is missing; expected " +
                        axes_text(axes));
    }
    if (it->second < 0 || it->second >= extents[i]) {
      throw LayoutError(who + ": " + to_string(axes[i]) + " = " + std::to_string(it->second) +
                        " is outside [0, " + std::to_string(extents[i]) + ")");
    }
    index += it->second * scale;
    scale *= extents[i];
  }
  return index;
}

AxisPoint point_of(int64_t index, const std::vector<Axis>& axes,
                   const std::vector<int64_t>& extents) {
  AxisPoint point;
  for (size_t i = 0; i < axes.size(); ++i) {
    point[axes[i]] = index % extents[i];
    index /= extents[i];
  }
  return point;
}

std::vector<Axis> codomain_axes(const std::vector<AxisExtent>& box) {
  std::vector<Axis> axes;
  for (const AxisExtent& a : box) axes.push_back(a.axis);
  return axes;
}

std::vector<int64_t> codomain_extents(const std::vector<AxisExtent>& box) {
  std::vector<int64_t> extents;
  for (const AxisExtent& a : box) extents.push_back(a.extent);
  return extents;
}

std::vector<int64_t> domain_extents(const Layout& layout) {
  std::vector<int64_t> extents;
  for (int i = 0; i < layout.rank(); ++i) extents.push_back(layout.mode(i).size());
  return extents;
}

}  // namespace

NamedLayout::NamedLayout(std::string name, std::vector<Axis> domain, Layout layout,
                         std::vector<AxisExtent> codomain)
    : name_(std::move(name)),
      domain_(std::move(domain)),
      layout_(std::move(layout)),
      codomain_(std::move(codomain)),
      inverse_(1, 0) {
  if (static_cast<int>(domain_.size()) != layout_.rank()) {
    throw LayoutError(name_ + ": domain " + axes_text(domain_) + " names " +
                      std::to_string(domain_.size()) + " axes for layout " + to_string(layout_) +
                      " of rank " + std::to_string(layout_.rank()) + "; name each mode once");
  }
  std::set<Axis> seen;
  for (Axis a : domain_) {
    if (!seen.insert(a).second) {
      throw LayoutError(name_ + ": axis " + to_string(a) + " appears twice in domain " +
                        axes_text(domain_));
    }
  }
  seen.clear();
  for (const AxisExtent& a : codomain_) {
    if (!seen.insert(a.axis).second || a.extent < 1) {
      throw LayoutError(name_ + ": codomain axis " + to_string(a.axis) + " (extent " +
                        std::to_string(a.extent) +
                        ") is repeated or empty; give distinct axes with extents >= 1");
    }
  }
  if (layout_.cosize() > box_size(codomain_)) {
    throw LayoutError(name_ + ": layout " + to_string(layout_) + " reaches offset " +
                      std::to_string(layout_.cosize() - 1) + ", outside the codomain " +
                      axes_text(codomain_axes(codomain_)) + " of " +
                      std::to_string(box_size(codomain_)) + " points");
  }
  bijective_ = layout_.size() == box_size(codomain_) && layout::is_bijective(layout_);
  if (bijective_) inverse_ = right_inverse(layout_);
}

int64_t NamedLayout::extent(Axis axis) const {
  for (size_t i = 0; i < domain_.size(); ++i) {
    if (domain_[i] == axis) return layout_.mode(static_cast<int>(i)).size();
  }
  for (const AxisExtent& a : codomain_) {
    if (a.axis == axis) return a.extent;
  }
  throw LayoutError(name_ + ": no axis " + to_string(axis) + "; it has domain " +
                    axes_text(domain_) + " and codomain " + axes_text(codomain_axes(codomain_)));
}

Layout NamedLayout::mode(Axis axis) const {
  auto it = std::find(domain_.begin(), domain_.end(), axis);
  if (it == domain_.end()) {
    throw LayoutError(name_ + ": no domain axis " + to_string(axis) + "; it has " +
                      axes_text(domain_));
  }
  return layout_.mode(static_cast<int>(it - domain_.begin()));
}

AxisPoint NamedLayout::operator()(const AxisPoint& domain_point) const {
  int64_t index = index_in(name_, domain_, domain_extents(layout_), domain_point);
  return point_of(layout_(index), codomain_axes(codomain_), codomain_extents(codomain_));
}

void NamedLayout::require_bijective(const std::string& what) const {
  if (!bijective_) {
    throw LayoutError(name_ + ": " + what + " needs a bijection, and " + to_string(layout_) +
                      " does not reach each of the " + std::to_string(box_size(codomain_)) +
                      " codomain points exactly once");
  }
}

AxisPoint NamedLayout::inverse(const AxisPoint& codomain_point) const {
  require_bijective("inverse");
  int64_t index =
      index_in(name_, codomain_axes(codomain_), codomain_extents(codomain_), codomain_point);
  return point_of(inverse_(index), domain_, domain_extents(layout_));
}

const Layout& NamedLayout::inverse_layout() const {
  require_bijective("inverse_layout");
  return inverse_;
}

std::string NamedLayout::to_table() const {
  require_bijective("to_table");
  if (codomain_.size() != 2) {
    throw LayoutError(name_ + ": to_table draws a codomain of two axes, not " +
                      axes_text(codomain_axes(codomain_)));
  }
  auto letter = [](Axis a) {
    switch (a) {
      case Axis::lane:
        return "L";
      case Axis::warp:
        return "W";
      case Axis::warpgroup:
        return "G";
      case Axis::value:
        return "V";
      default:
        return "?";
    }
  };
  std::vector<std::vector<std::string>> cells(codomain_[0].extent,
                                              std::vector<std::string>(codomain_[1].extent));
  size_t width = 0;
  for (int64_t r = 0; r < codomain_[0].extent; ++r) {
    for (int64_t c = 0; c < codomain_[1].extent; ++c) {
      AxisPoint owner = inverse({{codomain_[0].axis, r}, {codomain_[1].axis, c}});
      std::string cell;
      for (Axis a : domain_) cell += letter(a) + std::to_string(owner.at(a));
      width = std::max(width, cell.size());
      cells[r][c] = cell;
    }
  }
  std::string out = name_ + "\n";
  for (const auto& row : cells) {
    for (const std::string& cell : row) out += " " + std::string(width - cell.size(), ' ') + cell;
    out += "\n";
  }
  return out;
}

NamedLayout compose(const Layout& memory, const NamedLayout& fragment) {
  int64_t points = box_size(fragment.codomain());
  if (memory.size() != points) {
    throw LayoutError("compose: memory layout " + to_string(memory) + " has " +
                      std::to_string(memory.size()) + " coordinates, but " + fragment.name() +
                      " addresses a codomain of " + std::to_string(points));
  }
  // The codomain index is the memory layout's 1-D index, so the algebra's
  // composition does the work and keeps the fragment's domain modes.
  Layout through = composition(memory, fragment.layout());
  return NamedLayout(fragment.name() + " in " + to_string(memory), fragment.domain(), through,
                     {{Axis::offset, memory.cosize()}});
}

}  // namespace warpforge::layout
