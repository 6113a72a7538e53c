// Bit manipulation (PTX ISA 9.7.8.7 prmt... 9.7.8.x lop3, bfe, bfi, popc,
// clz, brev).
#pragma once

#include <cstdint>

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

enum class PrmtMode { none, f4e, b4e, rc8, ecl, ecr, rc16 };
// shf's direction and how it treats shift amounts above 32 (PTX ISA 9.7.8,
// shf): .clamp shifts by min(c, 32), .wrap by c mod 32.
enum class ShfDir { l, r };
enum class ShfMode { clamp, wrap };

class BitOps : public virtual KernelCore {
 public:
  // prmt.b32[.mode] d, a, b, selector: pick bytes of {b, a}.
  void prmt(const Reg& d, const Src& a, const Src& b, const Src& selector, PrmtMode mode = PrmtMode::none);
  // lop3.b32 d, a, b, c, lut: any 3-input logic function; lut = f(0xF0, 0xCC, 0xAA).
  void lop3(const Reg& d, const Src& a, const Src& b, const Src& c, std::uint8_t lut);
  void bfe(const Reg& d, const Src& a, const Src& start, const Src& length);
  void bfi(const Reg& d, const Src& insert, const Src& base, const Src& start, const Src& length);
  void popc(const Reg& d, const Src& a);
  void clz(const Reg& d, const Src& a);
  void brev(const Reg& d, const Src& a);
  // shf.{l,r}.{clamp,wrap}.b32 d, a, b, c: funnel shift of the 64-bit {b, a}
  // by c; d the upper (l) or lower (r) 32 bits of the result.
  void shf(ShfDir dir, ShfMode mode, const Reg& d, const Src& a, const Src& b, const Src& c);
};

}  // namespace warpforge::dsl
