// Shared-memory operand layouts of wgmma.mma_async, as a matrix descriptor
// describes them (PTX ISA 9.7.15.5.1.2, "Shared Memory Matrix Layout", and
// 9.7.15.5.1.2.1.3, "Canonical Layouts"). With T = 128 / element_bits (the
// elements in 16 bytes) and w = swizzle bytes / 16 (1 for no swizzle), the
// canonical layouts over (mn, k), in elements, are
//   K-major,  none:      ((8,m),(T,c)):((T,SBO),(1,LBO))
//   K-major,  swizzled:  ((8,m),(T,c)):((wT,SBO),(1,T))      c <= w
//   MN-major, none:      ((T,m),(8,c)):((1,SBO),(T,LBO))
//   MN-major, swizzled:  ((T,w,m),(8,c)):((1,T,LBO),(wT,SBO))
// each composed with the mode's swizzle (Swizzle<0|1|2|3,4,3> on byte
// addresses). The ISA writes 2k for c: one wgmma reads 32 bytes of K.
// LBO and SBO are the descriptor's leading and stride byte offsets; the
// K-major swizzled layouts do not use LBO. Offsets are relative to a start
// address aligned to the swizzle's repeat (8 rows of w * 16 bytes).
#pragma once

#include <cstdint>

#include "warpforge/layout/swizzle.hpp"

namespace warpforge::layout {

// Which dimension of the operand is contiguous in memory: K (A as row-major
// M x K, B as N x K) or M / N.
enum class Major { k, mn };

// The canonical layout of an mn x k operand: (mn, k) -> element offset.
// Throws LayoutError unless element_bits is 8, 16 or 32, mn and k are
// multiples of the layout's repeat (K-major: 8 and T; MN-major: w * T and
// 8), a K-major swizzled k fits in one swizzled row (k <= w * T), and the
// byte offsets are multiples of 16 (the descriptor stores them >> 4).
SwizzledLayout wgmma_canonical_layout(Major major, SmemSwizzle swizzle, int element_bits,
                                      int64_t mn, int64_t k, int64_t lbo_bytes, int64_t sbo_bytes);

// The unit a tile of this major-ness and swizzle is built from, 8 rows of
// w * 16 bytes (a core matrix when unswizzled), as TMA with the same swizzle
// writes it: (mn, k) -> element offset. Tile it with tile_to_shape.
SwizzledLayout wgmma_smem_atom(Major major, SmemSwizzle swizzle, int element_bits);

}  // namespace warpforge::layout
