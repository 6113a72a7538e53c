// IntTuple: a tree of integers, the shape and stride type of the layout
// algebra. A leaf holds one integer; a tuple holds an ordered list of IntTuples
// (its modes). This is the runtime form of CuTe's IntTuple (CUTLASS
// docs, "CuTe Layouts"); warpforge builds layouts while it generates PTX, so
// nothing here needs to be known at compile time.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace warpforge::layout {

class IntTuple {
 public:
  // The empty tuple (rank 0).
  IntTuple() = default;
  // A leaf. Implicit so that `{4, {2, 8}}` reads as a nested tuple.
  IntTuple(int64_t value) : leaf_(true), value_(value) {}
  IntTuple(std::initializer_list<IntTuple> modes) : modes_(modes) {}
  explicit IntTuple(std::vector<IntTuple> modes) : modes_(std::move(modes)) {}

  bool is_leaf() const { return leaf_; }
  // The leaf's integer; throws LayoutError on a tuple.
  int64_t value() const;
  // The tuple's modes; a leaf has none.
  const std::vector<IntTuple>& modes() const { return modes_; }
  // Number of top-level modes; a leaf has rank 1.
  int rank() const { return leaf_ ? 1 : static_cast<int>(modes_.size()); }
  // Nesting depth: 0 for a leaf, 1 for a tuple of leaves, ...
  int depth() const;
  // Mode i; a leaf is its own mode 0. Throws LayoutError when i is out of range.
  const IntTuple& operator[](int i) const;

  bool operator==(const IntTuple& other) const = default;

 private:
  bool leaf_ = false;
  int64_t value_ = 0;
  std::vector<IntTuple> modes_;
};

// Product of every leaf (1 for the empty tuple): the size of a shape.
int64_t product(const IntTuple& t);
// The leaves in order, depth-first.
std::vector<int64_t> flatten(const IntTuple& t);
// Same tree structure (leaf where leaf, same rank where tuple).
bool congruent(const IntTuple& a, const IntTuple& b);
// `8`, `(4,8)`, `((2,2),8)`.
std::string to_string(const IntTuple& t);
std::ostream& operator<<(std::ostream& os, const IntTuple& t);

}  // namespace warpforge::layout
