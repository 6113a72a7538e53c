#include "warpforge/tile/smem_swizzle.hpp"

#include <string>

#include "warpforge/error.hpp"

namespace warpforge::tile {

dsl::Reg swizzled_chunk(dsl::Kernel& k, const layout::Swizzle& swizzle, const dsl::Reg& chunk,
                        const dsl::Src& phase) {
  if (swizzle.bits() == 0)
    throw TileError("swizzled chunk in kernel '" + k.name() + "' with " +
                    layout::to_string(swizzle) +
                    ": the identity moves no chunk; a swizzle of 1 to 3 bits (Hopper's 32, 64, "
                    "128-byte modes) is "
                    "needed");
  const int mask = (1 << swizzle.bits()) - 1;
  return ((chunk & mask) ^ phase) << swizzle.base();
}

}  // namespace warpforge::tile
