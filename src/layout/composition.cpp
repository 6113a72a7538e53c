#include "warpforge/layout/composition.hpp"

#include "flat_modes.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/coalesce.hpp"

namespace warpforge::layout {

namespace {

std::string mode_text(int64_t shape, int64_t stride) {
  return std::to_string(shape) + ":" + std::to_string(stride);
}

// A o (s:d) for one leaf of B.
Layout compose_leaf(const Layout& a, int64_t s, int64_t d) {
  if (d == 0) return Layout(s, 0);
  std::vector<detail::FlatMode> modes = detail::flat_modes(coalesce(a));
  std::vector<detail::FlatMode> result;
  int64_t rest_stride = d;
  int64_t rest_shape = s;
  for (size_t i = 0; i < modes.size() && rest_shape > 1; ++i) {
    const detail::FlatMode& m = modes[i];
    if (i + 1 == modes.size()) {
      // The last mode is unbounded: what is left of B lands in it entirely.
      result.push_back({rest_shape, m.stride * rest_stride});
      break;
    }
    // Divide this mode by the stride still to be skipped.
    if (rest_stride % m.shape == 0) {
      rest_stride /= m.shape;
      continue;
    }
    if (m.shape % rest_stride != 0) {
      throw LayoutError("composition: " + to_string(a) + " o " + mode_text(s, d) + ": mode " +
                        mode_text(m.shape, m.stride) + " and the remaining stride " +
                        std::to_string(rest_stride) + " do not divide one another");
    }
    int64_t kept_shape = m.shape / rest_stride;
    int64_t kept_stride = m.stride * rest_stride;
    rest_stride = 1;
    // Keep min(kept_shape, rest_shape) coordinates of what remains.
    if (rest_shape <= kept_shape) {
      if (kept_shape % rest_shape != 0) {
        throw LayoutError("composition: " + to_string(a) + " o " + mode_text(s, d) + ": " +
                          std::to_string(rest_shape) + " coordinates do not tile mode " +
                          mode_text(kept_shape, kept_stride) + " evenly");
      }
      result.push_back({rest_shape, kept_stride});
      rest_shape = 1;
    } else {
      if (rest_shape % kept_shape != 0) {
        throw LayoutError("composition: " + to_string(a) + " o " + mode_text(s, d) + ": mode " +
                          mode_text(kept_shape, kept_stride) + " does not divide the remaining " +
                          std::to_string(rest_shape) + " coordinates");
      }
      result.push_back({kept_shape, kept_stride});
      rest_shape /= kept_shape;
    }
  }
  return coalesce(detail::from_flat_modes(result));
}

}  // namespace

Layout composition(const Layout& a, const Layout& b) {
  if (b.shape().is_leaf()) return compose_leaf(a, b.shape().value(), b.stride().value());
  std::vector<Layout> modes;
  for (int i = 0; i < b.rank(); ++i) modes.push_back(composition(a, b.mode(i)));
  return make_layout(modes);
}

Layout composition(const Layout& a, const std::vector<Layout>& tiler) {
  if (static_cast<int>(tiler.size()) > a.rank()) {
    throw LayoutError("composition: a tiler of " + std::to_string(tiler.size()) +
                      " modes does not fit " + to_string(a) + ", which has " +
                      std::to_string(a.rank()) + "; give at most that many");
  }
  std::vector<Layout> modes;
  for (int i = 0; i < a.rank(); ++i) {
    modes.push_back(i < static_cast<int>(tiler.size()) ? composition(a.mode(i), tiler[i])
                                                       : a.mode(i));
  }
  return make_layout(modes);
}

}  // namespace warpforge::layout
