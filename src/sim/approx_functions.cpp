#include "approx_functions.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <numbers>

#include "float_format.hpp"

namespace warpforge::sim {

namespace {

constexpr std::uint64_t kSign64 = 1ull << 63;
constexpr std::uint64_t kInf64 = 0x7FF0000000000000ull;

// The sign of x·m² − 1, exactly, where m is the midpoint between the
// positive double lo and the next double up (x positive and finite): the
// side of m on which 1/sqrt(x) lies. Integers: x = X·2^(ex−53) and
// m = (2L+1)·2^(el−54), so x·m² = P·2^−n with P = X·(2L+1)², under 2^163.
int midpoint_square_vs_one(double x, double lo) {
  int ex = 0, el = 0;
  const auto X = static_cast<std::uint64_t>(std::ldexp(std::frexp(x, &ex), 53));
  const auto M = 2 * static_cast<std::uint64_t>(std::ldexp(std::frexp(lo, &el), 53)) + 1;
  const int n = -(ex - 53 + 2 * (el - 54));
  using U128 = unsigned __int128;
  const U128 m2 = static_cast<U128>(M) * M;
  const U128 low = static_cast<U128>(static_cast<std::uint64_t>(m2)) * X;
  const U128 high = static_cast<U128>(static_cast<std::uint64_t>(m2 >> 64)) * X;
  const U128 middle = (low >> 64) + static_cast<std::uint64_t>(high);
  const std::uint64_t w[3] = {
      static_cast<std::uint64_t>(low), static_cast<std::uint64_t>(middle),
      static_cast<std::uint64_t>(high >> 64) + static_cast<std::uint64_t>(middle >> 64)};
  int top = 0, ones = 0;  // P's leading bit, and how many bits it has set
  for (int i = 0; i < 3; ++i) {
    if (w[i]) top = 64 * i + 63 - std::countl_zero(w[i]);
    ones += std::popcount(w[i]);
  }
  if (top != n) return top > n ? 1 : -1;
  return ones == 1 ? 0 : 1;
}

}  // namespace

// The H100 divides as the reciprocal unit's 1/b times a (PTX ISA 9.7.3.8
// "div": for |b| in [2^126, 2^128] div.approx.f32 gives 0, since the
// reciprocal, subnormal there, is flushed). A subnormal b (no .ftz) is
// scaled first, a and b both by 2^24, so its reciprocal does not overflow:
// out of sample (seed 20261126, case 737) div.approx.f32 of a =
// -2.97e-31 (0x8cc0c94b) by b = -2^-149 gives 2.1197e14 (0x5740c94b), the
// quotient, where 1/b would be an infinity; the scaling changes no other
// recorded case (a power of two scales both exactly, so the product is the
// same unless 1/b overflowed). With the reciprocal correctly rounded here
// (the H100's is within 1 ulp of it, rcp.approx.f32 in the recording) the
// result is within 2 ulps of the H100's on every recorded case of
// div.approx.f32 and div.approx.ftz.f32, both recordings (924 and 932 of
// 1,024 bit for bit at seed 0, 910 and 914 at seed 20261126, the NaNs and
// the flushed quotients included); the replay holds both units to 2 ulps
// (tools/difftest/float_families.cpp).
namespace {

// What div.approx and div.full multiply: a, scaled as b is, and the
// reciprocal unit's 1/b.
struct Factors {
  float left, right;  // a (scaled as b is), 1/b
};

Factors approx_parts(std::uint32_t a, std::uint32_t b) {
  float x = f32_of(a), y = f32_of(b);
  if (y != 0 && std::fabs(y) < FLT_MIN) {
    constexpr float k2To24 = 16777216.0f;
    x *= k2To24;
    y *= k2To24;
  }
  float r = f32_of(mufu_approx_f32(Op::rcp, static_cast<std::uint32_t>(bits_of(y))));
  if (std::fabs(r) < FLT_MIN) r = std::copysign(0.0f, r);
  return {x, r};
}

Factors full_parts(std::uint32_t a, std::uint32_t b) {
  const float y = f32_of(b);
  if (!(std::isfinite(y) && std::fabs(y) > 0x1p126f)) return approx_parts(a, b);
  return {f32_of(a) * 0.25f, f32_of(mufu_approx_f32(Op::rcp, static_cast<std::uint32_t>(bits_of(y * 0.25f))))};
}

std::uint32_t f32_result(float q) {
  return std::isnan(q) ? kF32.nan_bits : static_cast<std::uint32_t>(bits_of(q));
}

}  // namespace

std::uint32_t div_approx_f32(std::uint32_t a, std::uint32_t b) {
  const Factors p = approx_parts(a, b);
  return f32_result(p.left * p.right);
}

// div.full.f32 is div.approx.f32 over the full range (PTX ISA 9.7.3.8: 2 ulps
// at most): where |b| > 2^126, whose reciprocal div.approx flushes, a and b
// are scaled by 1/4 first. Modelled so since the seed-20261126 recording,
// where the correctly rounded quotient (the simulator's before) was 2 ulps
// from the H100's (case 322: 949.67847 / 495.96878 gives 0x3ff51801, the
// quotient rounded to nearest 0x3ff517ff; this model gives 0x3ff517ff too,
// the H100's reciprocal being another last bit there). The model agrees with
// 926 (seed 0) and 921 (seed 20261126) of the 1,024 recorded cases of
// div.full.f32, 917 and 921 of div.full.ftz.f32, against 785, 766, 747 and
// 775 for the correctly rounded quotient; the rest is the reciprocal unit's
// last bit, within 2 ulps on every case, which the replay holds it to.
std::uint32_t div_full_f32(std::uint32_t a, std::uint32_t b) {
  const Factors p = full_parts(a, b);
  return f32_result(p.left * p.right);
}

std::uint32_t contracted_sum_f32(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint8_t mode) {
  const Factors p = mode & kContractedQuotient ? full_parts(a, b) : Factors{f32_of(a), f32_of(b)};
  const auto form = static_cast<ContractedSum>(mode & ~kContractedQuotient);
  const float x = form == ContractedSum::addend_minus_product ? -p.left : p.left;
  const float z = form == ContractedSum::product_minus_addend ? -f32_of(c) : f32_of(c);
  return f32_result(std::fma(x, p.right, z));
}

// The H100 reduces the angle in f32 before its sine unit: turns =
// a · RN(1/2π), the product cut toward zero to f32 (SASS FMUL.RZ), and the
// function of the turns' fraction. So for |a| >= 2^24·2π (turns an
// integer) sin gives a zero of the turns' sign and cos gives 1, and the
// error near 100 reaches 2^-16.4 against the true sine, which this
// reduction reproduces. With the function of the fraction computed in
// double, every recorded case of the four units (sin, cos, with and without
// .ftz; 1,024 each, edges and |a| up to 3.4e38 included) is within an
// absolute 2^-21.54 of the H100's (the error of its sine unit); the replay
// holds them to 2^-21.5 (tools/difftest/float_families.cpp). Infinities
// and NaNs give the canonical NaN.
std::uint32_t sin_cos_approx_f32(Op op, std::uint32_t a) {
  const float x = f32_of(a);
  if (!std::isfinite(x)) return kF32.nan_bits;
  constexpr float kTurnsPerRadian = static_cast<float>(0.5 * std::numbers::inv_pi);
  const double product = static_cast<double>(x) * kTurnsPerRadian;  // exact: 24 × 24 bits
  const float turns = f32_of(encode_float(product, kF32, Rounding::rz, false));
  const double fraction = static_cast<double>(turns) - std::round(static_cast<double>(turns));
  const double angle = 2 * std::numbers::pi * fraction;
  float r = static_cast<float>(op == Op::sin ? std::sin(angle) : std::cos(angle));
  if (op == Op::sin && r == 0) r = std::copysign(0.0f, turns);
  return static_cast<std::uint32_t>(bits_of(r));
}

// The H100's rcp.approx.ftz.f64 (SASS MUFU.RCP64H) reads only the operand's
// high word: the f32 reciprocal of its significand's 20 bits, cut to 20
// bits, is the result's high word, the low word zero. A subnormal operand is
// flushed (its reciprocal is an infinity), a subnormal result is flushed to
// a zero, a NaN gives 0x7FFFFFFF00000000. With the f32 reciprocal correctly
// rounded here, 1,010 of the 1,024 recorded cases agree bit for bit and 14
// differ by one unit of the 20th bit (2^32 f64 ulps), where the H100's f32
// reciprocal is the other side of the cut; the replay holds the unit to
// that (tools/difftest/float_families.cpp).
std::uint64_t rcp_approx_ftz_f64(std::uint64_t a) {
  const std::uint64_t sign = a & kSign64, magnitude = a & ~kSign64;
  if (magnitude > kInf64) return 0x7FFFFFFF00000000ull;
  if (magnitude == kInf64) return sign;
  if (magnitude < 0x0010000000000000ull) return sign | kInf64;
  const int exponent = static_cast<int>(magnitude >> 52) - 1023;
  const auto high_bits = static_cast<std::uint32_t>(magnitude >> 32) & 0xFFFFFu;
  const float significand = 1.0f + std::ldexp(static_cast<float>(high_bits), -20);
  const std::uint64_t cut = bits_of(1.0f / significand) & ~std::uint64_t{7};
  const double r = std::ldexp(static_cast<double>(f32_of(cut)), -exponent);
  return r < DBL_MIN ? sign : sign | bits_of(r);
}

// The H100's rsqrt.approx.f64 is 1/sqrt(a) correctly rounded on every
// recorded case (1,024: the finite positive ones checked against a 60-digit
// reference; 121 of them differ from the host's 1/std::sqrt, rounded
// twice). A NaN operand is returned quieted; a negative one gives
// 0xFFF8000000000000; ±0 gives ±inf; +inf gives +0; subnormals are not
// flushed.
std::uint64_t rsqrt_approx_f64(std::uint64_t a) {
  const double x = f64_of(a);
  if (std::isnan(x)) return a | (1ull << 51);
  if (x == 0) return (a & kSign64) | kInf64;
  if (x < 0) return 0xFFF8000000000000ull;
  if (std::isinf(x)) return 0;
  // 1/std::sqrt is within 1.5 ulps; step while 1/sqrt(x) lies past a midpoint
  // (it is never on one: 1/m² is not a dyadic rational for a midpoint m).
  double y = 1.0 / std::sqrt(x);
  while (midpoint_square_vs_one(x, y) < 0) y = std::nextafter(y, HUGE_VAL);
  for (double below = std::nextafter(y, 0.0); midpoint_square_vs_one(x, below) > 0;
       below = std::nextafter(y, 0.0))
    y = below;
  return bits_of(y);
}

}  // namespace warpforge::sim
