#include "warpforge/layout/complement.hpp"

#include <algorithm>

#include "flat_modes.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/coalesce.hpp"

namespace warpforge::layout {

Layout complement(const Layout& a, int64_t cotarget) {
  if (cotarget < 1) {
    throw LayoutError("complement: cotarget " + std::to_string(cotarget) + " for " + to_string(a) +
                      " must be >= 1");
  }
  std::vector<detail::FlatMode> modes;
  for (const detail::FlatMode& m : detail::flat_modes(a)) {
    if (m.shape > 1 && m.stride > 0) modes.push_back(m);
  }
  std::sort(modes.begin(), modes.end(), [](const detail::FlatMode& x, const detail::FlatMode& y) {
    return x.stride != y.stride ? x.stride < y.stride : x.shape < y.shape;
  });
  std::vector<detail::FlatMode> result;
  int64_t covered = 1;  // the span [0, covered) reached by the modes so far
  for (const detail::FlatMode& m : modes) {
    if (m.stride % covered != 0) {
      throw LayoutError("complement: " + to_string(a) + " has no complement: stride " +
                        std::to_string(m.stride) + " is not a multiple of " +
                        std::to_string(covered) +
                        ", the span of its smaller-stride modes; modes must not overlap");
    }
    result.push_back({m.stride / covered, covered});
    covered = m.shape * m.stride;
  }
  result.push_back({(cotarget + covered - 1) / covered, covered});
  return coalesce(detail::from_flat_modes(result));
}

Layout complement(const Layout& a) {
  return complement(a, a.cosize());
}

}  // namespace warpforge::layout
