#include "warpforge/layout/product.hpp"

#include <algorithm>

#include "by_mode.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/complement.hpp"
#include "warpforge/layout/composition.hpp"

namespace warpforge::layout {

namespace {

// `layout`'s top-level modes, padded with 1:0 to `rank` modes.
std::vector<Layout> padded_modes(const Layout& layout, int rank) {
  std::vector<Layout> modes;
  for (int i = 0; i < layout.rank(); ++i) modes.push_back(layout.mode(i));
  while (static_cast<int>(modes.size()) < rank) modes.push_back(Layout(1, 0));
  return modes;
}

// Mode i of the result is order(A_i, B'_i), where B' places the copies of A.
Layout mode_wise_product(const Layout& block, const Layout& repeat, bool block_inner) {
  int rank = std::max(block.rank(), repeat.rank());
  Layout a = make_layout(padded_modes(block, rank));
  Layout b = make_layout(padded_modes(repeat, rank));
  Layout placed = composition(complement(a, a.size() * b.cosize()), b);
  std::vector<Layout> modes;
  for (int i = 0; i < rank; ++i) {
    modes.push_back(block_inner ? make_layout({a.mode(i), placed.mode(i)})
                                : make_layout({placed.mode(i), a.mode(i)}));
  }
  return make_layout(modes);
}

}  // namespace

Layout logical_product(const Layout& a, const Layout& b) {
  return make_layout({a, composition(complement(a, a.size() * b.cosize()), b)});
}

Layout logical_product(const Layout& a, const std::vector<Layout>& tiler) {
  return detail::by_mode("logical_product", a, tiler,
                         [](const Layout& m, const Layout& t) { return logical_product(m, t); });
}

Layout zipped_product(const Layout& a, const std::vector<Layout>& tiler) {
  return detail::zip_tiles(logical_product(a, tiler), tiler.size());
}

Layout tiled_product(const Layout& a, const std::vector<Layout>& tiler) {
  return detail::unpack_rests(logical_product(a, tiler), tiler.size());
}

Layout blocked_product(const Layout& block, const Layout& repeat) {
  return mode_wise_product(block, repeat, true);
}

Layout raked_product(const Layout& block, const Layout& repeat) {
  return mode_wise_product(block, repeat, false);
}

Layout tile_to_shape(const Layout& block, const IntTuple& shape) {
  if (shape.rank() < block.rank()) {
    throw LayoutError("tile_to_shape: shape " + to_string(shape) + " has rank " +
                      std::to_string(shape.rank()) + ", less than the rank " +
                      std::to_string(block.rank()) + " of block " + to_string(block));
  }
  std::vector<Layout> blocks = padded_modes(block, shape.rank());
  std::vector<IntTuple> repeats;
  for (int i = 0; i < shape.rank(); ++i) {
    int64_t extent = product(shape[i]);
    if (extent % blocks[i].size() != 0) {
      throw LayoutError("tile_to_shape: extent " + std::to_string(extent) + " of mode " +
                        std::to_string(i) + " of " + to_string(shape) +
                        " is not a multiple of block " + to_string(block) + "'s size " +
                        std::to_string(blocks[i].size()) + " in that mode");
    }
    repeats.emplace_back(extent / blocks[i].size());
  }
  return blocked_product(make_layout(blocks), column_major(IntTuple(std::move(repeats))));
}

}  // namespace warpforge::layout
