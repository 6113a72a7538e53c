// The 64-bit shared-memory matrix descriptor of tcgen05.mma and tcgen05.cp
// (PTX ISA 9.7.16.4.1, "Shared memory descriptor"):
//   bits  0-13  start address >> 4
//   bits 16-29  leading dimension byte offset (LBO) >> 4 (or, in absolute
//               mode, the leading dimension's byte address >> 4)
//   bits 32-45  stride dimension byte offset (SBO) >> 4
//   bits 46-48  the fixed value 0b001 (the sm_100 descriptor version)
//   bits 49-51  matrix base offset (0 when the swizzle pattern starts on its
//               repeat boundary)
//   bit  52     leading dimension mode: 0 relative offset, 1 absolute address
//   bits 61-63  swizzle: 0 none, 1 128-byte with 32-byte atoms, 2 128-byte,
//               4 64-byte, 6 32-byte
// LBO and SBO mean what they mean for wgmma (wgmma_smem_layout.hpp); the
// differences from wgmma's descriptor are the version bits, the wider
// swizzle field with its other codes, and the leading dimension mode.
#pragma once

#include <cstdint>

#include "warpforge/layout/swizzle.hpp"

namespace warpforge::layout {

struct Tcgen05SmemDescriptor {
  std::uint32_t start_address = 0;  // shared-space byte address, a multiple of 16, < 256 KiB
  std::uint32_t lbo_bytes = 0;      // a multiple of 16, < 256 KiB
  std::uint32_t sbo_bytes = 0;      // a multiple of 16, < 256 KiB
  SmemSwizzle swizzle = SmemSwizzle::none;
  int base_offset = 0;        // 0..7
  bool lbo_absolute = false;  // bit 52

  // Throws LayoutError when a field does not fit.
  std::uint64_t encode() const;
  // Throws LayoutError on a descriptor without the version bits or with a
  // swizzle code warpforge does not use (1, the 32-byte-atom 128-byte mode,
  // and the unassigned 3, 5, 7).
  static Tcgen05SmemDescriptor decode(std::uint64_t bits);
  friend bool operator==(const Tcgen05SmemDescriptor&, const Tcgen05SmemDescriptor&) = default;
};

}  // namespace warpforge::layout
