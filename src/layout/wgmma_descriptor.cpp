#include "warpforge/layout/wgmma_descriptor.hpp"

#include <string>

#include "warpforge/error.hpp"

namespace warpforge::layout {

namespace {

// Each address field holds bits 4..17 of a byte offset (14 bits).
std::uint64_t field(const char* what, std::uint32_t bytes) {
  if (bytes % 16 != 0 || bytes >= (1u << 18))
    throw LayoutError(std::string("wgmma descriptor: ") + what + " " + std::to_string(bytes) +
                      " bytes; a multiple of 16 below 262144 (the field keeps bits 4..17)");
  return bytes >> 4;
}

// The 2-bit swizzle codes of the descriptor (ISA table: 1 is 128-byte).
std::uint64_t swizzle_code(SmemSwizzle s) {
  switch (s) {
    case SmemSwizzle::none: return 0;
    case SmemSwizzle::b128: return 1;
    case SmemSwizzle::b64: return 2;
    case SmemSwizzle::b32: return 3;
  }
  return 0;
}

}  // namespace

std::uint64_t WgmmaDescriptor::encode() const {
  return field("start address", start_address) | field("leading byte offset", lbo_bytes) << 16 |
         field("stride byte offset", sbo_bytes) << 32 | swizzle_code(swizzle) << 62;
}

WgmmaDescriptor WgmmaDescriptor::decode(std::uint64_t bits) {
  constexpr SmemSwizzle kModes[] = {SmemSwizzle::none, SmemSwizzle::b128, SmemSwizzle::b64, SmemSwizzle::b32};
  auto bytes = [&](int shift) { return static_cast<std::uint32_t>(((bits >> shift) & 0x3FFF) << 4); };
  return {bytes(0), bytes(16), bytes(32), kModes[bits >> 62]};
}

}  // namespace warpforge::layout
