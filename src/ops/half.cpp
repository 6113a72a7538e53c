#include "warpforge/ops/half.hpp"

#include <bit>
#include <cmath>

namespace warpforge::ops {

std::uint16_t f32_to_bf16_bits(float x) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if (std::isnan(x)) return static_cast<std::uint16_t>((u >> 16) | 0x0040);  // keep it a (quiet) NaN
  // Round to nearest even on the 16 bits dropped.
  std::uint32_t rounding = 0x7FFF + ((u >> 16) & 1);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

float bf16_bits_to_f32(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

std::uint16_t f32_to_f16_bits(float x) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000);
  std::uint32_t abs = u & 0x7FFFFFFF;
  if (abs > 0x7F800000) return sign | 0x7E00;   // NaN
  if (abs >= 0x477FF000) return sign | 0x7C00;  // rounds to >= 65520: infinity
  if (abs < 0x38800000) {
    // Subnormal or zero in binary16: value = m * 2^-24, round the scaled value to even.
    float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // * 2^24, exact
    auto m = static_cast<std::uint32_t>(std::nearbyint(scaled));
    return sign | static_cast<std::uint16_t>(m);
  }
  std::uint32_t exp = (abs >> 23) - 127 + 15;
  std::uint32_t mant = abs & 0x7FFFFF;
  std::uint32_t half = (exp << 10) | (mant >> 13);
  std::uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // carries into the exponent correctly
  return sign | static_cast<std::uint16_t>(half);
}

float f16_bits_to_f32(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exp = (h >> 10) & 0x1F;
  std::uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    float v = static_cast<float>(mant) / 16777216.0f;  // m * 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

}  // namespace warpforge::ops
