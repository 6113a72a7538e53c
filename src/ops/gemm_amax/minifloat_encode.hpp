// Converting an f32 register to an e4m3, e5m2 or e2m1 code inside a kernel,
// with the semantics of PTX cvt.rn.satfinite (round to nearest even; beyond
// the largest finite magnitude, infinities included, ±max; NaN to 0x7F, for
// e2m1 +6) — the same as ops::encode() on the host. sm_80 has no such cvt
// (cvt to e4m3x2/e5m2x2 needs sm_89, to e2m1x2 sm_100a; PTX ISA 9.7.9.21), so
// this is a documented sequence of about 20 integer and float instructions
// (11 for e2m1: a rounding by an added constant, no conversion).
#pragma once

#include "warpforge/dsl.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

// Returns a u32 register holding the code (sign included) of `value` (f32).
dsl::Reg emit_minifloat_encode(dsl::Kernel& k, const dsl::Reg& value, runtime::DType format);

}  // namespace warpforge::ops
