#include "flat_modes.hpp"

namespace warpforge::layout::detail {

std::vector<FlatMode> flat_modes(const Layout& layout) {
  std::vector<FlatMode> modes;
  for (size_t i = 0; i < layout.flat_shape().size(); ++i) {
    modes.push_back({layout.flat_shape()[i], layout.flat_stride()[i]});
  }
  return modes;
}

Layout from_flat_modes(const std::vector<FlatMode>& modes) {
  if (modes.empty()) return Layout(1, 0);
  if (modes.size() == 1) return Layout(modes[0].shape, modes[0].stride);
  std::vector<IntTuple> shapes, strides;
  for (const FlatMode& m : modes) {
    shapes.emplace_back(m.shape);
    strides.emplace_back(m.stride);
  }
  return Layout(IntTuple(std::move(shapes)), IntTuple(std::move(strides)));
}

}  // namespace warpforge::layout::detail
