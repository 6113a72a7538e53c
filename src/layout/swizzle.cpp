#include "warpforge/layout/swizzle.hpp"

#include "warpforge/error.hpp"
#include "warpforge/layout/composition.hpp"
#include "warpforge/layout/product.hpp"

namespace warpforge::layout {

Swizzle::Swizzle(int bits, int base, int shift) : bits_(bits), base_(base), shift_(shift) {
  if (bits < 0 || base < 0 || shift < bits) {
    throw LayoutError("Swizzle<" + std::to_string(bits) + "," + std::to_string(base) + "," +
                      std::to_string(shift) +
                      ">: need bits >= 0, base >= 0 and shift >= bits (so the XOR source and "
                      "target bits do not overlap)");
  }
}

int64_t Swizzle::operator()(int64_t offset) const {
  int64_t mask = ((int64_t{1} << bits_) - 1) << base_;
  return offset ^ ((offset >> shift_) & mask);
}

std::string to_string(const Swizzle& s) {
  return "Swizzle<" + std::to_string(s.bits()) + "," + std::to_string(s.base()) + "," +
         std::to_string(s.shift()) + ">";
}

std::string to_string(SmemSwizzle mode) {
  switch (mode) {
    case SmemSwizzle::none:
      return "none";
    case SmemSwizzle::b32:
      return "32B";
    case SmemSwizzle::b64:
      return "64B";
    case SmemSwizzle::b128:
      return "128B";
  }
  return "?";
}

int64_t swizzle_bytes(SmemSwizzle mode) {
  switch (mode) {
    case SmemSwizzle::none:
      return 16;
    case SmemSwizzle::b32:
      return 32;
    case SmemSwizzle::b64:
      return 64;
    case SmemSwizzle::b128:
      return 128;
  }
  return 16;
}

Swizzle smem_swizzle(SmemSwizzle mode, int element_bytes) {
  int log2_bytes = -1;
  for (int e = 0; e <= 4; ++e) {
    if (element_bytes == (1 << e)) log2_bytes = e;
  }
  if (log2_bytes < 0) {
    throw LayoutError("smem_swizzle: element size " + std::to_string(element_bytes) +
                      " bytes; the " + to_string(mode) +
                      " swizzle works on elements of 1, 2, 4, 8 or 16 bytes");
  }
  int bits = 0;
  for (int64_t chunks = swizzle_bytes(mode) / 16; chunks > 1; chunks /= 2) ++bits;
  return Swizzle(bits, 4 - log2_bytes, 3);
}

SwizzledLayout composition(const SwizzledLayout& a, const Layout& tiler) {
  return SwizzledLayout(a.swizzle(), composition(a.layout(), tiler));
}

SwizzledLayout tile_to_shape(const SwizzledLayout& atom, const IntTuple& shape) {
  return SwizzledLayout(atom.swizzle(), tile_to_shape(atom.layout(), shape));
}

std::string to_string(const SwizzledLayout& layout) {
  return to_string(layout.swizzle()) + " o " + to_string(layout.layout());
}

}  // namespace warpforge::layout
