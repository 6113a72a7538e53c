// Conversions (PTX ISA 9.7.9.21 cvt, 9.7.9.21.1 packed forms): between
// integer widths, f32/f64/f16/bf16/tf32, and the fp8 formats e4m3 and e5m2.
#pragma once

#include "warpforge/dsl/isa/alu.hpp"

namespace warpforge::dsl {

struct CvtMode {
  Round round = Round::none;  // none: the default for the pair (see cvt())
  bool ftz = false;
  bool sat = false;        // .sat: clamp (float dst: to [0, 1]; int dst: to its range)
  bool satfinite = false;  // .satfinite: out-of-range -> max finite (required for fp8)
  bool relu = false;       // .relu: negative results -> 0
};

class ConvertOps : public virtual KernelCore {
 public:
  // cvt.<mods>.<d.type>.<a.type> d, a. Where the pair needs a rounding mode and
  // none is given: float->float narrowing and int->float use .rn, float->int
  // uses .rzi (C's truncation); widening takes none (PTX ISA 9.7.9.21).
  void cvt(const Reg& d, const Reg& a, CvtMode m = {});
  // Explicit types, for sources held in registers of a bit type.
  void cvt(Type dtype, Type atype, const Reg& d, const Src& a, CvtMode m = {});

  // Two f32 values into one packed register, hi in the upper half:
  // cvt.rn.{f16x2,bf16x2}.f32 and cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 (sm_89+).
  void cvt_pack(Type packed, const Reg& d, const Src& hi, const Src& lo, CvtMode m = {Round::rn});
  // Two fp8 values (in a 16-bit register) to an f16x2 register (sm_89+):
  // cvt.rn.f16x2.e4m3x2 d, a.
  void cvt_unpack_fp8(Type fp8x2, const Reg& d, const Reg& a);
};

}  // namespace warpforge::dsl
