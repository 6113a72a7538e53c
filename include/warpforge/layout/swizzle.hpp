// Swizzles: XOR permutations of offsets that spread the rows of a tile across
// shared-memory banks, and layouts composed with them.
//
// Swizzle{bits B, base M, shift S} (CuTe's Swizzle<B,M,S>, cute/swizzle.hpp)
// XORs the B bits at positions [M+S, M+S+B) of an offset into the B bits at
// [M, M+B):  y = x ^ ((x >> S) & (((1 << B) - 1) << M)).
// With S >= B the two bit ranges do not overlap, so the map is an involution,
// hence a bijection on every aligned block of 2^(M+S+B) offsets.
#pragma once

#include <cstdint>
#include <string>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout {

class Swizzle {
 public:
  // The identity: no bits.
  Swizzle() = default;
  // Throws LayoutError unless bits >= 0, base >= 0 and shift >= bits.
  Swizzle(int bits, int base, int shift);

  int bits() const { return bits_; }
  int base() const { return base_; }
  int shift() const { return shift_; }
  int64_t operator()(int64_t offset) const;
  bool operator==(const Swizzle& other) const = default;

 private:
  int bits_ = 0;
  int base_ = 0;
  int shift_ = 0;
};

// `Swizzle<3,4,3>`.
std::string to_string(const Swizzle& swizzle);

// The swizzle modes of the Hopper matrix units, shared by wgmma matrix
// descriptors and TMA tensor maps. In byte addresses each mode XORs the 16-byte
// chunk index within a span of 32, 64 or 128 bytes with the index of the span
// mod 8 (PTX ISA 9.7.15.5.1, "Shared Memory Matrix Layout": the canonical
// layouts are composed with Swizzle<1,4,3>, <2,4,3>, <3,4,3>, Swizzle<0,4,3>
// for none; CUDA driver API CUtensorMapSwizzle for TMA).
enum class SmemSwizzle { none, b32, b64, b128 };

std::string to_string(SmemSwizzle mode);
// Bytes in one swizzled row: 16 for none (one 16-byte chunk), else 32/64/128.
int64_t swizzle_bytes(SmemSwizzle mode);
// The mode as a Swizzle on offsets counted in elements of `element_bytes`
// bytes: the byte-address swizzle Swizzle<B,4,3> becomes Swizzle<B,4-log2(e),3>.
// Throws LayoutError unless element_bytes is 1, 2, 4, 8 or 16.
Swizzle smem_swizzle(SmemSwizzle mode, int element_bytes);

// A layout followed by a swizzle of its offsets: coordinate -> swizzle(layout(c)).
class SwizzledLayout {
 public:
  SwizzledLayout(Swizzle swizzle, Layout layout) : swizzle_(swizzle), layout_(std::move(layout)) {}

  const Swizzle& swizzle() const { return swizzle_; }
  const Layout& layout() const { return layout_; }
  int64_t size() const { return layout_.size(); }
  int64_t operator()(int64_t index) const { return swizzle_(layout_(index)); }
  int64_t operator()(const IntTuple& coord) const { return swizzle_(layout_(coord)); }
  int64_t operator()(int64_t row, int64_t col) const { return swizzle_(layout_(row, col)); }

 private:
  Swizzle swizzle_;
  Layout layout_;
};

// (swizzle o layout) o tiler: the swizzle stays outermost, so tiling and
// dividing a swizzled layout works on its unswizzled part.
SwizzledLayout composition(const SwizzledLayout& a, const Layout& tiler);
// The swizzled layout's layout repeated (blocked) to `shape`, swizzle kept:
// right for atoms that span whole swizzle repeats (2^(base+shift+bits)
// offsets), so each copy is swizzled alike. Throws like tile_to_shape.
SwizzledLayout tile_to_shape(const SwizzledLayout& atom, const IntTuple& shape);
// `Swizzle<3,4,3> o (8,64):(64,1)`.
std::string to_string(const SwizzledLayout& layout);

}  // namespace warpforge::layout
