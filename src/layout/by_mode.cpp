#include "by_mode.hpp"

#include "warpforge/error.hpp"

namespace warpforge::layout::detail {

Layout by_mode(const std::string& name, const Layout& a, const std::vector<Layout>& tiler,
               const ModeOperation& op) {
  if (tiler.empty() || static_cast<int>(tiler.size()) > a.rank()) {
    throw LayoutError(name + ": a tiler of " + std::to_string(tiler.size()) + " modes for " +
                      to_string(a) + "; give 1 to " + std::to_string(a.rank()) +
                      " modes, one per mode of the layout");
  }
  std::vector<Layout> modes;
  for (int i = 0; i < a.rank(); ++i) {
    modes.push_back(i < static_cast<int>(tiler.size()) ? op(a.mode(i), tiler[i]) : a.mode(i));
  }
  return make_layout(modes);
}

namespace {
void split(const Layout& result, size_t tiled_modes, std::vector<Layout>& tiles,
           std::vector<Layout>& rests) {
  for (int i = 0; i < result.rank(); ++i) {
    if (static_cast<size_t>(i) < tiled_modes) {
      tiles.push_back(result.mode(i).mode(0));
      rests.push_back(result.mode(i).mode(1));
    } else {
      rests.push_back(result.mode(i));
    }
  }
}
}  // namespace

Layout zip_tiles(const Layout& result, size_t tiled_modes) {
  std::vector<Layout> tiles, rests;
  split(result, tiled_modes, tiles, rests);
  return make_layout({make_layout(tiles), make_layout(rests)});
}

Layout unpack_rests(const Layout& result, size_t tiled_modes) {
  std::vector<Layout> tiles, rests;
  split(result, tiled_modes, tiles, rests);
  std::vector<Layout> modes{make_layout(tiles)};
  modes.insert(modes.end(), rests.begin(), rests.end());
  return make_layout(modes);
}

}  // namespace warpforge::layout::detail
