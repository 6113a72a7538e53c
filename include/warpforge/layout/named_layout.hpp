// NamedLayout: a layout whose domain modes and codomain coordinates carry
// hardware meanings, so one object says which thread holds element (m, n) of
// a tile and in which register slot, and back.
//
// The domain is the layout's top-level modes, one Axis each (for example lane,
// warp, value). The layout's offset is read as a point of the codomain, a box
// of named extents indexed colexicographically (first axis fastest): a tile
// (row, col) reads offset = row + rows * col, matching CuTe's thread-value
// layouts over column-major tiles.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

enum class Axis {
  lane,       // %laneid, 0..31 (0..63 in an AMD wave64)
  warp,       // warp within a warpgroup, 0..3
  warpgroup,  // warpgroup within a CTA
  value,      // register slot: the index of the element in the instruction's operand list
  row,        // tile row
  col,        // tile column
  offset,     // element offset in memory
};

std::string to_string(Axis axis);

struct AxisExtent {
  Axis axis;
  int64_t extent;
};

// A point given by named coordinates.
using AxisPoint = std::map<Axis, int64_t>;

class NamedLayout {
 public:
  // Throws LayoutError unless `domain` names each top-level mode of `layout`
  // once, the codomain axes are distinct with extents >= 1, and every offset
  // of the layout lies inside the codomain box.
  NamedLayout(std::string name, std::vector<Axis> domain, Layout layout,
              std::vector<AxisExtent> codomain);

  const std::string& name() const { return name_; }
  const Layout& layout() const { return layout_; }
  const std::vector<Axis>& domain() const { return domain_; }
  const std::vector<AxisExtent>& codomain() const { return codomain_; }
  // Extent of a domain or codomain axis; throws LayoutError for one it lacks.
  int64_t extent(Axis axis) const;
  // The layout of one domain axis (its mode): how that axis moves the offset.
  Layout mode(Axis axis) const;
  // Whether every codomain point is reached exactly once.
  bool is_bijective() const { return bijective_; }

  // Domain point -> codomain point. Throws LayoutError for a missing, extra or
  // out-of-range axis.
  AxisPoint operator()(const AxisPoint& domain_point) const;
  // Codomain point -> the one domain point reaching it. Throws LayoutError on a
  // layout that is not a bijection, or for a bad point.
  AxisPoint inverse(const AxisPoint& codomain_point) const;
  // The inverse as a layout: codomain index -> domain index (both
  // colexicographic), for emitting the arithmetic. Throws like inverse().
  const Layout& inverse_layout() const;

  // A two-axis codomain drawn as a grid whose cells name the owner, e.g.
  // `L5V3` for lane 5, value 3 (W for warp, G for warpgroup). Throws
  // LayoutError unless the codomain has two axes and the layout is a bijection.
  std::string to_table() const;

 private:
  void require_bijective(const std::string& what) const;

  std::string name_;
  std::vector<Axis> domain_;
  Layout layout_;
  std::vector<AxisExtent> codomain_;
  bool bijective_ = false;
  Layout inverse_;
};

// memory o fragment: the same domain, mapped through `memory` (codomain index
// -> element offset) into a one-axis codomain {offset: cosize(memory)}, e.g.
// (lane, value) -> offset of the element in a row-major tile. Throws
// LayoutError when the memory layout's size is not the fragment's codomain
// size, or when the composition's divisibility conditions fail.
NamedLayout compose(const Layout& memory, const NamedLayout& fragment);

}  // namespace warpforge::layout
