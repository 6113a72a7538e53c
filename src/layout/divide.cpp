#include "warpforge/layout/divide.hpp"

#include "by_mode.hpp"
#include "warpforge/layout/complement.hpp"
#include "warpforge/layout/composition.hpp"

namespace warpforge::layout {

Layout logical_divide(const Layout& a, const Layout& tile) {
  return composition(a, make_layout({tile, complement(tile, a.size())}));
}

Layout logical_divide(const Layout& a, const std::vector<Layout>& tiler) {
  return detail::by_mode("logical_divide", a, tiler,
                         [](const Layout& m, const Layout& t) { return logical_divide(m, t); });
}

Layout zipped_divide(const Layout& a, const std::vector<Layout>& tiler) {
  return detail::zip_tiles(logical_divide(a, tiler), tiler.size());
}

Layout tiled_divide(const Layout& a, const std::vector<Layout>& tiler) {
  return detail::unpack_rests(logical_divide(a, tiler), tiler.size());
}

}  // namespace warpforge::layout
