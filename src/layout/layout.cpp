#include "warpforge/layout/layout.hpp"

#include <cstdint>

#include "warpforge/error.hpp"

namespace warpforge::layout {

namespace {

void check_leaves(const IntTuple& shape, const IntTuple& stride) {
  for (int64_t s : flatten(shape)) {
    if (s < 1) {
      throw LayoutError("Layout: shape " + to_string(shape) + " has extent " + std::to_string(s) +
                        "; every extent must be >= 1");
    }
  }
  for (int64_t d : flatten(stride)) {
    if (d < 0) {
      throw LayoutError("Layout: stride " + to_string(stride) + " has " + std::to_string(d) +
                        "; strides must be >= 0");
    }
  }
}

// Every function of the algebra computes sizes and offsets in int64_t: a
// layout whose size, or whose largest offset plus one (its cosize), does not
// fit is refused rather than wrapped around.
int64_t size_that_fits(const IntTuple& shape) {
  int64_t size = 1;
  for (int64_t extent : flatten(shape)) {
    if (__builtin_mul_overflow(size, extent, &size)) {
      throw LayoutError("Layout: shape " + to_string(shape) +
                        " has more than 2^63 - 1 coordinates; the product of the extents "
                        "must fit a signed 64-bit integer");
    }
  }
  return size;
}

void check_cosize_fits(const std::vector<int64_t>& shape, const std::vector<int64_t>& stride,
                       const IntTuple& shape_tuple, const IntTuple& stride_tuple) {
  int64_t last = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(shape[i] - 1, stride[i], &reach) ||
        __builtin_add_overflow(last, reach, &last) || last == INT64_MAX) {
      throw LayoutError("Layout: shape " + to_string(shape_tuple) + " with stride " +
                        to_string(stride_tuple) +
                        " reaches past the largest offset a signed 64-bit integer holds "
                        "(the sum of (extent - 1) * stride, plus one, must be below 2^63)");
    }
  }
}

// Column-major strides for `shape`, starting at `current` and advancing it.
IntTuple compact_strides(const IntTuple& shape, int64_t& current) {
  if (shape.is_leaf()) {
    int64_t stride = current;
    current *= shape.value();
    return stride;
  }
  std::vector<IntTuple> modes;
  for (const IntTuple& m : shape.modes()) modes.push_back(compact_strides(m, current));
  return IntTuple(std::move(modes));
}

IntTuple compact_strides_reversed(const IntTuple& shape, int64_t& current) {
  if (shape.is_leaf()) {
    int64_t stride = current;
    current *= shape.value();
    return stride;
  }
  std::vector<IntTuple> modes(shape.modes().size());
  for (size_t i = modes.size(); i-- > 0;)
    modes[i] = compact_strides_reversed(shape.modes()[i], current);
  return IntTuple(std::move(modes));
}

std::string range_error(const IntTuple& coord, const IntTuple& shape) {
  return "Layout: coordinate " + to_string(coord) + " is not in shape " + to_string(shape) +
         "; give an integer in [0, size) or a tuple of the shape's rank, each in range";
}

// Offset of coordinate `coord` within the (shape, stride) subtree.
int64_t offset_of(const IntTuple& coord, const IntTuple& shape, const IntTuple& stride,
                  const IntTuple& whole_coord, const IntTuple& whole_shape) {
  if (coord.is_leaf()) {
    int64_t c = coord.value();
    if (c < 0 || c >= product(shape)) throw LayoutError(range_error(whole_coord, whole_shape));
    if (shape.is_leaf()) return c * stride.value();
    int64_t offset = 0;
    for (int i = 0; i < shape.rank(); ++i) {
      int64_t extent = product(shape[i]);
      offset += offset_of(c % extent, shape[i], stride[i], whole_coord, whole_shape);
      c /= extent;
    }
    return offset;
  }
  if (shape.is_leaf() || coord.rank() != shape.rank()) {
    throw LayoutError(range_error(whole_coord, whole_shape));
  }
  int64_t offset = 0;
  for (int i = 0; i < shape.rank(); ++i) {
    offset += offset_of(coord[i], shape[i], stride[i], whole_coord, whole_shape);
  }
  return offset;
}

IntTuple natural_coordinate(int64_t index, const IntTuple& shape) {
  if (shape.is_leaf()) return index;
  std::vector<IntTuple> modes;
  for (const IntTuple& m : shape.modes()) {
    int64_t extent = product(m);
    modes.push_back(natural_coordinate(index % extent, m));
    index /= extent;
  }
  return IntTuple(std::move(modes));
}

}  // namespace

Layout::Layout(IntTuple shape, IntTuple stride)
    : shape_(std::move(shape)), stride_(std::move(stride)) {
  if (!congruent(shape_, stride_)) {
    throw LayoutError("Layout: shape " + to_string(shape_) + " and stride " + to_string(stride_) +
                      " are not congruent; they need the same tree structure");
  }
  check_leaves(shape_, stride_);
  flat_shape_ = flatten(shape_);
  flat_stride_ = flatten(stride_);
  size_ = size_that_fits(shape_);
  check_cosize_fits(flat_shape_, flat_stride_, shape_, stride_);
}

int64_t Layout::cosize() const {
  int64_t last = 0;
  for (size_t i = 0; i < flat_shape_.size(); ++i) last += (flat_shape_[i] - 1) * flat_stride_[i];
  return last + 1;
}

Layout Layout::mode(int i) const {
  return Layout(shape_[i], stride_[i]);
}

int64_t Layout::operator()(int64_t index) const {
  if (index < 0 || index >= size_) throw LayoutError(range_error(index, shape_));
  int64_t offset = 0;
  for (size_t i = 0; i < flat_shape_.size(); ++i) {
    offset += (index % flat_shape_[i]) * flat_stride_[i];
    index /= flat_shape_[i];
  }
  return offset;
}

int64_t Layout::operator()(const IntTuple& coord) const {
  return offset_of(coord, shape_, stride_, coord, shape_);
}

int64_t Layout::operator()(int64_t row, int64_t col) const {
  return (*this)(IntTuple{row, col});
}

IntTuple Layout::coordinate(int64_t index) const {
  if (index < 0 || index >= size_) throw LayoutError(range_error(index, shape_));
  return natural_coordinate(index, shape_);
}

Layout column_major(const IntTuple& shape) {
  size_that_fits(shape);  // so that the strides below do not overflow
  int64_t current = 1;
  return Layout(shape, compact_strides(shape, current));
}

Layout row_major(const IntTuple& shape) {
  size_that_fits(shape);
  int64_t current = 1;
  return Layout(shape, compact_strides_reversed(shape, current));
}

Layout make_layout(const std::vector<Layout>& modes) {
  std::vector<IntTuple> shapes, strides;
  for (const Layout& m : modes) {
    shapes.push_back(m.shape());
    strides.push_back(m.stride());
  }
  return Layout(IntTuple(std::move(shapes)), IntTuple(std::move(strides)));
}

std::string to_string(const Layout& layout) {
  return to_string(layout.shape()) + ":" + to_string(layout.stride());
}

std::ostream& operator<<(std::ostream& os, const Layout& layout) {
  return os << to_string(layout);
}

}  // namespace warpforge::layout
