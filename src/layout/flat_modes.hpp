// Internal: a layout's leaves as a flat list of (shape, stride) modes, the form
// in which coalesce, composition and complement do their work.
#pragma once

#include <cstdint>
#include <vector>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout::detail {

struct FlatMode {
  int64_t shape;
  int64_t stride;
};

std::vector<FlatMode> flat_modes(const Layout& layout);
// One mode gives a leaf layout `s:d`, none gives `1:0`, more give a flat tuple.
Layout from_flat_modes(const std::vector<FlatMode>& modes);

}  // namespace warpforge::layout::detail
