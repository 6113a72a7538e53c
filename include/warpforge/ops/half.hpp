// Host-side f16 and bf16 encodings (IEEE 754 binary16; bfloat16 = the upper
// half of a binary32), rounding to nearest even. For preparing inputs and
// reading results; kernels convert with cvt.
#pragma once

#include <cstdint>

namespace warpforge::ops {

std::uint16_t f32_to_f16_bits(float x);
float f16_bits_to_f32(std::uint16_t h);
std::uint16_t f32_to_bf16_bits(float x);
float bf16_bits_to_f32(std::uint16_t h);

// The value nearest to x that the format holds (x -> bits -> float).
inline float round_to_f16(float x) { return f16_bits_to_f32(f32_to_f16_bits(x)); }
inline float round_to_bf16(float x) { return bf16_bits_to_f32(f32_to_bf16_bits(x)); }

}  // namespace warpforge::ops
