// Converting an f32 register to an e4m3, e5m2 or e2m1 code inside a kernel,
// with the semantics of PTX cvt.rn.satfinite (round to nearest even; beyond
// the largest finite magnitude, infinities included, ±max; NaN to 0x7F, for
// e2m1 +6) — the same as ops::encode() on the host. sm_80 has no such cvt
// (cvt to e4m3x2/e5m2x2 needs sm_89, to e2m1x2 sm_100a; PTX ISA 9.7.9.21), so
// this is a documented sequence of about 20 integer and float instructions
// (10 for e2m1: a rounding by an added constant, no conversion).
#pragma once

#include <vector>

#include "warpforge/dsl.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

// Returns a u32 register holding the code (sign included) of `value` (f32).
dsl::Reg emit_minifloat_encode(dsl::Kernel& k, const dsl::Reg& value, runtime::DType format);

// The e2m1 codes (cvt.rn.satfinite's) of 1 to 8 values packed into a u32,
// element e in bits 4e..4e+3: code e's magnitude that of magnitudes[e] (f32:
// its |.| rounded, beyond 6 and NaN saturating to 6), its sign bit
// signs[e]'s (f32), whose NaNs must be positive (as arithmetic's canonical
// NaN is) where a NaN value is to encode as +6. 5 instructions an element and 15 a word.
dsl::Reg emit_e2m1_codes(dsl::Kernel& k, const std::vector<dsl::Reg>& signs, const std::vector<dsl::Reg>& magnitudes);

}  // namespace warpforge::ops
