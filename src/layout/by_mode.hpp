// Internal: applying a binary layout operation mode by mode against a tiler,
// and gathering the (tile, rest) pairs it produces, shared by the divides and
// the products.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout::detail {

using ModeOperation = std::function<Layout(const Layout&, const Layout&)>;

// op(mode i of a, tiler[i]) for each tiler entry; a's other modes unchanged.
Layout by_mode(const std::string& name, const Layout& a, const std::vector<Layout>& tiler,
               const ModeOperation& op);
// From by_mode's result: ((tile_0, tile_1, ...), (rest_0, rest_1, ..., untouched...)).
Layout zip_tiles(const Layout& by_mode_result, size_t tiled_modes);
// From by_mode's result: ((tile_0, tile_1, ...), rest_0, rest_1, ..., untouched...).
Layout unpack_rests(const Layout& by_mode_result, size_t tiled_modes);

}  // namespace warpforge::layout::detail
