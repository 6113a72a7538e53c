#include "warpforge/layout/coalesce.hpp"

#include "flat_modes.hpp"

namespace warpforge::layout {

Layout coalesce(const Layout& layout) {
  std::vector<detail::FlatMode> merged;
  for (const detail::FlatMode& m : detail::flat_modes(layout)) {
    if (m.shape == 1) continue;
    if (!merged.empty() && m.stride == merged.back().shape * merged.back().stride) {
      merged.back().shape *= m.shape;
    } else {
      merged.push_back(m);
    }
  }
  return detail::from_flat_modes(merged);
}

}  // namespace warpforge::layout
