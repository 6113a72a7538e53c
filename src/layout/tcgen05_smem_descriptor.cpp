#include "warpforge/layout/tcgen05_smem_descriptor.hpp"

#include <string>

#include "descriptor_field.hpp"

namespace warpforge::layout {

namespace {

constexpr const char* kName = "tcgen05 shared-memory descriptor";
constexpr std::uint64_t kVersion = 1ull << 46;  // bits 46-48 = 0b001

// The 3-bit swizzle codes at bits 61-63 (PTX ISA 9.7.16.4.1).
std::uint64_t tcgen05_swizzle_code(SmemSwizzle s) {
  switch (s) {
    case SmemSwizzle::none:
      return 0;
    case SmemSwizzle::b128:
      return 2;
    case SmemSwizzle::b64:
      return 4;
    case SmemSwizzle::b32:
      return 6;
  }
  return 0;
}

}  // namespace

std::uint64_t Tcgen05SmemDescriptor::encode() const {
  if (base_offset < 0 || base_offset > 7)
    throw LayoutError(std::string(kName) + ": base offset " + std::to_string(base_offset) +
                      "; 0..7 (3 bits)");
  return detail::descriptor_field(kName, "start address", start_address) |
         detail::descriptor_field(kName, "leading byte offset", lbo_bytes) << 16 |
         detail::descriptor_field(kName, "stride byte offset", sbo_bytes) << 32 | kVersion |
         static_cast<std::uint64_t>(base_offset) << 49 |
         static_cast<std::uint64_t>(lbo_absolute) << 52 | tcgen05_swizzle_code(swizzle) << 61;
}

Tcgen05SmemDescriptor Tcgen05SmemDescriptor::decode(std::uint64_t bits) {
  if (((bits >> 46) & 7) != 1)
    throw LayoutError(std::string(kName) + ": bits 46-48 hold " + std::to_string((bits >> 46) & 7) +
                      "; the sm_100 descriptor has the fixed value 0b001 there");
  SmemSwizzle swizzle = SmemSwizzle::none;
  switch (bits >> 61) {
    case 0:
      swizzle = SmemSwizzle::none;
      break;
    case 2:
      swizzle = SmemSwizzle::b128;
      break;
    case 4:
      swizzle = SmemSwizzle::b64;
      break;
    case 6:
      swizzle = SmemSwizzle::b32;
      break;
    default:
      throw LayoutError(std::string(kName) + ": swizzle code " + std::to_string(bits >> 61) +
                        "; warpforge uses 0 (none), 2 (128-byte), 4 (64-byte) and 6 (32-byte)");
  }
  return {detail::descriptor_bytes(bits, 0),  detail::descriptor_bytes(bits, 16),
          detail::descriptor_bytes(bits, 32), swizzle,
          static_cast<int>((bits >> 49) & 7), ((bits >> 52) & 1) != 0};
}

}  // namespace warpforge::layout
