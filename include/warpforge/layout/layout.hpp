// Layout: a function from coordinates to integer offsets, given as a
// hierarchical Shape:Stride pair of congruent IntTuples (CuTe's layouts, see
// CUTLASS "CuTe Layouts" and Cecka, "CuTe Layout Representation and Algebra").
//
// A coordinate of shape S is either one integer in [0, size(S)) or, for a tuple
// shape, a tuple with one coordinate per mode; an integer given for a tuple
// shape is split colexicographically (the first mode varies fastest). The
// offset is the sum over leaves of coordinate * stride. Shapes are >= 1 and
// strides >= 0.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "warpforge/layout/int_tuple.hpp"

namespace warpforge::layout {

class Layout {
 public:
  // Throws LayoutError unless shape and stride are congruent, every shape leaf
  // is >= 1, every stride leaf is >= 0, and size() and cosize() fit int64_t.
  explicit Layout(IntTuple shape, IntTuple stride);

  const IntTuple& shape() const { return shape_; }
  const IntTuple& stride() const { return stride_; }
  int rank() const { return shape_.rank(); }
  int depth() const { return shape_.depth(); }
  // Number of coordinates: the product of the shape.
  int64_t size() const { return size_; }
  // One past the largest offset: L(size - 1) + 1 for strides >= 0.
  int64_t cosize() const;
  // Top-level mode i as a layout of its own.
  Layout mode(int i) const;

  // The offset of a 1-D index in [0, size).
  int64_t operator()(int64_t index) const;
  // The offset of a hierarchical coordinate (natural, or integers standing for
  // whole sub-shapes).
  int64_t operator()(const IntTuple& coord) const;
  // Rank-2 convenience: row index into mode 0, column index into mode 1.
  int64_t operator()(int64_t row, int64_t col) const;
  // The natural (fully hierarchical) coordinate of a 1-D index.
  IntTuple coordinate(int64_t index) const;

  // Leaves of shape and stride, depth-first.
  const std::vector<int64_t>& flat_shape() const { return flat_shape_; }
  const std::vector<int64_t>& flat_stride() const { return flat_stride_; }

  bool operator==(const Layout& other) const {
    return shape_ == other.shape_ && stride_ == other.stride_;
  }

 private:
  IntTuple shape_;
  IntTuple stride_;
  std::vector<int64_t> flat_shape_;
  std::vector<int64_t> flat_stride_;
  int64_t size_;
};

// The compact column-major layout of `shape` (strides are prefix products).
Layout column_major(const IntTuple& shape);
// The compact row-major layout of `shape` (the last mode varies fastest).
Layout row_major(const IntTuple& shape);
// Concatenation: the layout whose top-level modes are `modes`, in order.
Layout make_layout(const std::vector<Layout>& modes);
// `(4,8):(1,4)`.
std::string to_string(const Layout& layout);
std::ostream& operator<<(std::ostream& os, const Layout& layout);

}  // namespace warpforge::layout
