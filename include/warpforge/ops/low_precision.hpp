// Host-side encode/decode of the low-precision formats of block-scaled GEMM
// (OCP Microscaling Formats (MX) v1.0, section 5; PTX ISA 5.2.5, alternate floating-point formats):
//
//   e4m3 ("fn")  bias 7,  no infinity, S.1111.111 is NaN, max 448
//   e5m2         bias 15, IEEE-like: S.11111.00 is inf, S.11111.xx NaN, max 57344
//   e2m1         bias 1,  4 bits, no inf/NaN, values 0 0.5 1 1.5 2 3 4 6;
//                packed two per byte, the element with the lower index in the low nibble
//   e8m0         2^(E-127) for E = 0..254, 0xFF is NaN (unsigned, a scale only)
//
// Scales of dtype e4m3 are the NVFP4 "ue4m3" scales: e4m3 codes whose sign is
// clear (the quantizer writes no others; decode honours the sign as cvt does).
//
// encode() rounds to nearest, ties to even, and saturates: values beyond the
// largest finite magnitude, infinities included, become ±max. This is PTX
// `cvt.rn.satfinite.{e4m3x2,e5m2x2,e2m1x2}.f32` (PTX ISA 9.7.9.21): for e5m2 we
// chose to saturate rather than produce inf, so an FP8 C never holds an
// infinity the f32 accumulator did not have. NaN encodes to the canonical NaN
// (0x7F) for e4m3 and e5m2; e2m1 has no NaN, and NaN encodes to +6 (the NaN is
// still visible in amax, which is taken before C's conversion).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

// True for e4m3, e5m2, e2m1 (the data formats) and e8m0.
bool is_low_precision(runtime::DType t);

// The value of one code (a nibble 0..15 for e2m1). Throws OpsError for a
// dtype that is not e4m3, e5m2, e2m1 or e8m0.
float decode(runtime::DType t, std::uint8_t code);

// The code nearest to x (see above) for e4m3, e5m2 and e2m1. For e8m0 (a
// scale): the smallest power of two >= |x| (PTX cvt.rp.satfinite.ue8m0x2.f32
// rounds up), 2^-127 below that, NaN (0xFF) for NaN, inf or |x| > 2^127.
std::uint8_t encode(runtime::DType t, float x);

// The largest finite magnitude: 448, 57344, 6, 2^127.
float max_finite(runtime::DType t);

// x rounded to C's dtype and read back: identity for f32, RNE for f16 and
// bf16, encode() then decode() for e4m3, e5m2, e2m1. What the reference passes
// its accumulator through before comparing with a kernel's C.
float round_to(runtime::DType t, float x);

// e2m1 packing: codes (one per element, 0..15) <-> bytes, low nibble first.
std::vector<std::uint8_t> pack_e2m1(std::span<const std::uint8_t> codes);
inline std::uint8_t e2m1_at(std::span<const std::uint8_t> bytes, std::int64_t i) {
  return static_cast<std::uint8_t>((bytes[static_cast<std::size_t>(i / 2)] >> (4 * (i % 2))) & 0xF);
}

}  // namespace warpforge::ops
