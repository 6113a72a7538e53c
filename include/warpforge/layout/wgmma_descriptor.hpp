// The 64-bit shared-memory matrix descriptor of wgmma.mma_async (PTX ISA
// 9.7.15.5.1.2.2, "Matrix Descriptor Format"):
//   bits  0-13  start address >> 4
//   bits 16-29  leading dimension byte offset (LBO) >> 4
//   bits 32-45  stride dimension byte offset (SBO) >> 4
//   bits 49-51  matrix base offset (0 when the swizzle pattern starts on its
//               repeat boundary, as warpforge's tiles do)
//   bits 62-63  swizzle: 0 none, 1 128-byte, 2 64-byte, 3 32-byte
// What LBO and SBO mean for each major-ness and swizzle is written out in
// wgmma_smem_layout.hpp.
#pragma once

#include <cstdint>

#include "warpforge/layout/swizzle.hpp"

namespace warpforge::layout {

struct WgmmaDescriptor {
  std::uint32_t start_address = 0;  // shared-space byte address, a multiple of 16, < 256 KB
  std::uint32_t lbo_bytes = 0;      // a multiple of 16, < 256 KB
  std::uint32_t sbo_bytes = 0;      // a multiple of 16, < 256 KB
  SmemSwizzle swizzle = SmemSwizzle::none;

  // Throws LayoutError when a field is not a multiple of 16 or does not fit.
  std::uint64_t encode() const;
  static WgmmaDescriptor decode(std::uint64_t bits);
  friend bool operator==(const WgmmaDescriptor&, const WgmmaDescriptor&) = default;
};

}  // namespace warpforge::layout
