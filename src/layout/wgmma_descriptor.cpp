#include "warpforge/layout/wgmma_descriptor.hpp"

#include "descriptor_field.hpp"

namespace warpforge::layout {

namespace {

// The 2-bit swizzle codes of the descriptor (ISA table: 1 is 128-byte).
std::uint64_t wgmma_swizzle_code(SmemSwizzle s) {
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
  constexpr const char* kName = "wgmma descriptor";
  return detail::descriptor_field(kName, "start address", start_address) |
         detail::descriptor_field(kName, "leading byte offset", lbo_bytes) << 16 |
         detail::descriptor_field(kName, "stride byte offset", sbo_bytes) << 32 |
         wgmma_swizzle_code(swizzle) << 62;
}

WgmmaDescriptor WgmmaDescriptor::decode(std::uint64_t bits) {
  constexpr SmemSwizzle kModes[] = {SmemSwizzle::none, SmemSwizzle::b128, SmemSwizzle::b64,
                                    SmemSwizzle::b32};
  return {detail::descriptor_bytes(bits, 0), detail::descriptor_bytes(bits, 16),
          detail::descriptor_bytes(bits, 32), kModes[bits >> 62]};
}

}  // namespace warpforge::layout
