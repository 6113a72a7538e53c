#include "warpforge/layout/inverse.hpp"

#include <algorithm>

#include "flat_modes.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/coalesce.hpp"
#include "warpforge/layout/complement.hpp"

namespace warpforge::layout {

bool is_injective(const Layout& layout) {
  std::vector<detail::FlatMode> modes;
  for (const detail::FlatMode& m : detail::flat_modes(layout)) {
    if (m.shape == 1) continue;
    if (m.stride == 0) return false;
    modes.push_back(m);
  }
  std::sort(modes.begin(), modes.end(), [](const detail::FlatMode& x, const detail::FlatMode& y) {
    return x.stride < y.stride;
  });
  // Modes that nest (each stride reaches past the span of the ones below) are
  // injective; anything else, e.g. (3,2):(2,3), needs the offsets counted.
  bool nested = true;
  for (size_t i = 1; i < modes.size(); ++i) {
    nested = nested && modes[i].stride >= modes[i - 1].shape * modes[i - 1].stride;
  }
  if (nested) return true;
  std::vector<bool> seen(layout.cosize(), false);
  for (int64_t i = 0; i < layout.size(); ++i) {
    int64_t offset = layout(i);
    if (seen[offset]) return false;
    seen[offset] = true;
  }
  return true;
}

bool is_bijective(const Layout& layout) {
  return layout.cosize() == layout.size() && is_injective(layout);
}

Layout right_inverse(const Layout& layout) {
  std::vector<detail::FlatMode> modes = detail::flat_modes(layout);
  // The stride of each leaf in the 1-D index space of the domain.
  std::vector<int64_t> index_stride(modes.size());
  int64_t running = 1;
  for (size_t i = 0; i < modes.size(); ++i) {
    index_stride[i] = running;
    running *= modes[i].shape;
  }
  // Chain the leaves whose strides continue 1, s0, s0*s1, ...
  std::vector<detail::FlatMode> inverse;
  int64_t next = 1;
  for (bool found = true; found;) {
    found = false;
    for (size_t i = 0; i < modes.size(); ++i) {
      if (modes[i].shape > 1 && modes[i].stride == next) {
        inverse.push_back({modes[i].shape, index_stride[i]});
        next *= modes[i].shape;
        found = true;
        break;
      }
    }
  }
  return coalesce(detail::from_flat_modes(inverse));
}

Layout left_inverse(const Layout& layout) {
  if (!is_injective(layout)) {
    throw LayoutError("left_inverse: " + to_string(layout) +
                      " is not injective, so no left inverse exists");
  }
  return right_inverse(make_layout({layout, complement(layout)}));
}

std::optional<int64_t> index_of(const Layout& layout, int64_t offset) {
  if (offset < 0 || offset >= layout.cosize()) return std::nullopt;
  Layout inverse = left_inverse(layout);
  if (offset >= inverse.size()) return std::nullopt;
  // The extended index may point into the complement: then no index of
  // `layout` reaches this offset.
  int64_t index = inverse(offset);
  if (index >= layout.size() || layout(index) != offset) return std::nullopt;
  return index;
}

std::optional<IntTuple> coordinate_of(const Layout& layout, int64_t offset) {
  std::optional<int64_t> index = index_of(layout, offset);
  if (!index) return std::nullopt;
  return layout.coordinate(*index);
}

}  // namespace warpforge::layout
