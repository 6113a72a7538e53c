// Internal: the 14-bit address fields of the shared-memory matrix
// descriptors (wgmma's, PTX ISA 9.7.15.5.1.2.2, and tcgen05's, 9.7.16.4.1),
// which hold bits 4..17 of a byte address or offset.
#pragma once

#include <cstdint>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::layout::detail {

// `bytes` >> 4, refused unless it is a multiple of 16 below 256 KiB.
inline std::uint64_t descriptor_field(const char* descriptor, const char* what,
                                      std::uint32_t bytes) {
  if (bytes % 16 != 0 || bytes >= (1u << 18))
    throw LayoutError(std::string(descriptor) + ": " + what + " " + std::to_string(bytes) +
                      " bytes; a multiple of 16 below 262144 (the field keeps bits 4..17)");
  return bytes >> 4;
}

// The byte value of a 14-bit field at `shift`.
inline std::uint32_t descriptor_bytes(std::uint64_t bits, int shift) {
  return static_cast<std::uint32_t>(((bits >> shift) & 0x3FFF) << 4);
}

}  // namespace warpforge::layout::detail
