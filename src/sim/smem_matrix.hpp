// Internal: where an element of a matrix operand lies in shared memory, for
// the canonical layouts that wgmma.mma_async (PTX ISA 9.7.15.5.1.2) and
// tcgen05.mma / tcgen05.cp (9.7.16.4, the same layouts under another
// descriptor format) read through a matrix descriptor. With W the swizzle
// span, for an operand with rows along M (A) or N (B) and K across:
//   K-major, no swizzle: 8 x 16-byte "core matrices" of 128 contiguous bytes;
//     row r, K byte b at (r/8)*SBO + (r%8)*16 + (b/16)*LBO + b%16.
//   K-major, swizzled:   rows of W bytes, 8 rows per atom;
//     (r/8)*SBO + (r%8)*W + b            (LBO unused).
//   MN-major, no swizzle: 16 bytes along M/N by 8 K rows per core matrix;
//     M/N byte c, K index k at (c/16)*SBO + (k%8)*16 + (k/8)*LBO + c%16.
//   MN-major, swizzled: W bytes along M/N by 8 K rows per atom;
//     (c/W)*LBO + (k%8)*W + (k/8)*SBO + c%W.
// The swizzle itself (memory_access.hpp, swizzle_address) applies to the
// shared address.
#pragma once

#include <cstdint>

namespace warpforge::sim {

struct SmemMatrix {
  std::uint64_t start, lbo, sbo;
  std::uint32_t swizzle;  // span in bytes, 0 for none
};

// The byte offset of element (row, k) of an operand with `element_bytes`
// bytes per element, before swizzling. For elements narrower than a byte,
// pass k as the byte index along K and element_bytes = 1 (K-major only).
inline std::uint64_t smem_matrix_offset(const SmemMatrix& d, bool mn_major, std::uint32_t row,
                                        std::uint32_t k, std::uint32_t element_bytes) {
  if (!mn_major) {
    const std::uint64_t b = std::uint64_t{k} * element_bytes;
    if (d.swizzle == 0) return row / 8 * d.sbo + row % 8 * 16 + b / 16 * d.lbo + b % 16;
    return row / 8 * d.sbo + row % 8 * d.swizzle + b;
  }
  const std::uint64_t c = std::uint64_t{row} * element_bytes;
  if (d.swizzle == 0) return c / 16 * d.sbo + k % 8 * 16 + k / 8 * d.lbo + c % 16;
  return c / d.swizzle * d.lbo + k % 8 * d.swizzle + k / 8 * d.sbo + c % d.swizzle;
}

}  // namespace warpforge::sim
