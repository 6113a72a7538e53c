// Narrow float formats and cvt: ties-to-even, saturation, NaN, subnormals,
// packed forms and integer conversions.
#include <cmath>
#include <limits>

#include "../../src/sim/float_format.hpp"
#include "scalar_kernel.hpp"

namespace warpforge::sim::testing {
namespace {

std::uint32_t rn(double x, const FloatFormat& f, bool satfinite = false) {
  return encode_float(x, f, Rounding::rn, satfinite);
}

TEST(FloatFormat, RoundToNearestTiesToEven) {
  EXPECT_EQ(rn(1.0 + std::ldexp(1.0, -11), kF16), 0x3C00u);      // tie, even stays
  EXPECT_EQ(rn(1.0 + 3 * std::ldexp(1.0, -11), kF16), 0x3C02u);  // tie, odd rounds up
  EXPECT_EQ(rn(1.0 + std::ldexp(1.0, -8), kBF16), 0x3F80u);
  EXPECT_EQ(rn(1.0 + 3 * std::ldexp(1.0, -8), kBF16), 0x3F82u);
  EXPECT_EQ(rn(1.0625, kE4M3), 0x38u);  // 1 + 2^-4 is a tie between 1 and 1.125
  EXPECT_EQ(rn(1.1875, kE4M3), 0x3Au);  // 1.125 + 2^-4: ties to 1.25
  EXPECT_EQ(rn(1.125, kE5M2), 0x3Cu);   // tie between 1 and 1.25
  EXPECT_EQ(rn(1.375, kE5M2), 0x3Eu);   // tie between 1.25 and 1.5
}

TEST(FloatFormat, OverflowSaturationAndInfinity) {
  EXPECT_EQ(rn(448, kE4M3), 0x7Eu);
  EXPECT_EQ(rn(1000, kE4M3, true), 0x7Eu);
  EXPECT_EQ(rn(-1000, kE4M3, true), 0xFEu);
  EXPECT_EQ(rn(INFINITY, kE4M3, true), 0x7Eu);
  EXPECT_EQ(rn(1000, kE4M3), 0x7Fu);  // no infinity in e4m3: NaN
  EXPECT_EQ(rn(464, kE4M3, true), 0x7Eu);
  EXPECT_EQ(rn(57344, kE5M2), 0x7Bu);
  EXPECT_EQ(rn(61440, kE5M2), 0x7Cu);  // the tie above max finite rounds to even: infinity
  EXPECT_EQ(rn(61440, kE5M2, true), 0x7Bu);
  EXPECT_EQ(rn(-INFINITY, kE5M2), 0xFCu);
  EXPECT_EQ(rn(65520, kF16), 0x7C00u);
  EXPECT_EQ(encode_float(65520, kF16, Rounding::rz, false), 0x7BFFu);
  EXPECT_EQ(encode_float(-1e6, kF16, Rounding::rp, false), 0xFBFFu);
  EXPECT_EQ(encode_float(-1e6, kF16, Rounding::rm, false), 0xFC00u);
  EXPECT_EQ(rn(1e39, kBF16, true), 0x7F7Fu);
}

TEST(FloatFormat, NaNIsCanonical) {
  EXPECT_EQ(rn(NAN, kF16), 0x7FFFu);
  EXPECT_EQ(rn(NAN, kBF16), 0x7FFFu);
  EXPECT_EQ(rn(NAN, kE4M3, true), 0x7Fu);
  EXPECT_EQ(rn(NAN, kE5M2, true), 0x7Fu);
  EXPECT_TRUE(std::isnan(decode_float(0x7F, kE4M3)));
  EXPECT_TRUE(std::isnan(decode_float(0xFF, kE4M3)));
  EXPECT_EQ(decode_float(0x7E, kE4M3), 448.0);
  EXPECT_TRUE(std::isinf(decode_float(0x7C, kE5M2)));
  EXPECT_TRUE(std::isnan(decode_float(0x7D, kE5M2)));
}

TEST(FloatFormat, Subnormals) {
  EXPECT_EQ(rn(std::ldexp(1.0, -24), kF16), 0x0001u);
  EXPECT_EQ(rn(std::ldexp(1.0, -25), kF16), 0x0000u);   // tie to even zero
  EXPECT_EQ(rn(std::ldexp(3.0, -25), kF16), 0x0002u);   // tie to even 2
  EXPECT_EQ(rn(-std::ldexp(1.0, -26), kF16), 0x8000u);  // underflow keeps the sign
  EXPECT_EQ(rn(std::ldexp(1.0, -9), kE4M3), 0x01u);
  EXPECT_EQ(rn(std::ldexp(1.0, -6), kE4M3), 0x08u);  // smallest normal
  EXPECT_EQ(rn(std::ldexp(7.0, -9), kE4M3), 0x07u);  // largest subnormal
  EXPECT_EQ(rn(std::ldexp(1.0, -16), kE5M2), 0x01u);
  EXPECT_EQ(decode_float(0x0001, kF16), std::ldexp(1.0, -24));
  EXPECT_EQ(decode_float(0x03, kE4M3), std::ldexp(3.0, -9));
  EXPECT_EQ(flush_subnormal(0x8001u, kF16), 0x8000u);
}

TEST(FloatFormat, Tf32KeepsTenMantissaBits) {
  EXPECT_EQ(encode_float(1.0 + std::ldexp(1.0, -11), kTF32, Rounding::rna, false), 0x3F802000u);
  EXPECT_EQ(encode_float(1.0 + std::ldexp(1.0, -12), kTF32, Rounding::rna, false), 0x3F800000u);
}

using Convert = ScalarKernel;

TEST_F(Convert, PackedConversionsPutAInTheUpperHalf) {
  auto r = results(R"(
    cvt.rn.bf16x2.f32 %o0, 1.0, 2.0;
    cvt.rn.f16x2.f32 %o1, -2.0, 0.5;
    cvt.rn.satfinite.e4m3x2.f32 %h1, 1000.0, -0.5;
    cvt.u32.u16 %o2, %h1;
    cvt.rn.f16x2.e4m3x2 %o3, %h1;
    cvt.rn.satfinite.e5m2x2.f32 %h2, 0f7F800000, 0f7FC00000;
    cvt.u32.u16 %o4, %h2;
    mov.b32 %r1, 0x3C00C000;
    cvt.rn.satfinite.e4m3x2.f16x2 %h3, %r1;
    cvt.u32.u16 %o5, %h3;
    cvt.rn.relu.satfinite.e4m3x2.f32 %h4, -3.0, 3.0;
    cvt.u32.u16 %o6, %h4;
    cvt.rn.f16x2.e5m2x2 %o7, 0x7C7F;
  )",
                   8);
  EXPECT_EQ(r[0], 0x3F804000u);
  EXPECT_EQ(r[1], 0xC0003800u);
  EXPECT_EQ(r[2], 0x7EB0u);
  EXPECT_EQ(r[3], 0x5F00B800u);  // {448, -0.5} in f16
  EXPECT_EQ(r[4], 0x7B7Fu);      // +inf saturates to max finite; NaN stays NaN
  EXPECT_EQ(r[5], 0x38C0u);      // {1.0, -2.0}
  EXPECT_EQ(r[6], 0x0044u);      // relu: -3 -> 0, 3 -> 0x44
  EXPECT_EQ(r[7], 0x7C007FFFu);  // e5m2 inf -> f16 inf, e5m2 NaN -> canonical NaN
}

TEST_F(Convert, FloatToIntegerRoundsAndSaturates) {
  auto r = results(R"(
    cvt.rzi.s32.f32 %o0, -2.7;
    cvt.rmi.s32.f32 %o1, -2.2;
    cvt.rpi.s32.f32 %o2, 2.2;
    cvt.rni.s32.f32 %o3, 2.5;
    cvt.rni.s32.f32 %o4, 3.5;
    cvt.rzi.s32.f32 %o5, 0f7FC00000;
    cvt.rzi.s32.f32 %o6, 3.0e10;
    cvt.rzi.u32.f32 %o7, -5.0;
    cvt.rni.u8.f32 %h1, 300.0;
    cvt.u32.u16 %o8, %h1;
    cvt.sat.s8.s32 %h2, -1000;
    cvt.s32.s16 %o9, %h2;
    cvt.u32.u8 %o10, 0x1FF;
    cvt.s32.s8 %o11, 0x80;
    cvt.s8.s32 %h5, 0x1FF;
    cvt.s32.s16 %o19, %h5;
    cvt.rn.f32.s32 %f1, 16777217;
    mov.b32 %o12, %f1;
    cvt.rz.f32.f64 %f1, 0d3FD5555555555555;
    mov.b32 %o13, %f1;
    cvt.rni.f32.f32 %f1, 2.5;
    mov.b32 %o14, %f1;
    cvt.f32.bf16 %f1, 0x3FC0;
    mov.b32 %o15, %f1;
    cvt.rn.f16.f32 %h3, 65520.0;
    cvt.u32.u16 %o16, %h3;
    cvt.rn.satfinite.f16.f32 %h3, 65520.0;
    cvt.u32.u16 %o17, %h3;
    cvt.rna.tf32.f32 %o18, 0f3F801000;
  )",
                   20);
  EXPECT_EQ(static_cast<std::int32_t>(r[0]), -2);
  EXPECT_EQ(static_cast<std::int32_t>(r[1]), -3);
  EXPECT_EQ(r[2], 3u);
  EXPECT_EQ(r[3], 2u);
  EXPECT_EQ(r[4], 4u);
  EXPECT_EQ(r[5], 0u);  // NaN -> 0
  EXPECT_EQ(r[6], 0x7FFFFFFFu);
  EXPECT_EQ(r[7], 0u);
  EXPECT_EQ(r[8], 255u);
  EXPECT_EQ(static_cast<std::int32_t>(r[9]), -128);
  EXPECT_EQ(r[10], 0xFFu);
  EXPECT_EQ(static_cast<std::int32_t>(r[11]), -128);
  EXPECT_EQ(r[12], f32_bits(16777216.0f));  // 2^24 + 1 ties to even
  EXPECT_EQ(r[13], 0x3EAAAAAAu);            // 1/3 toward zero
  EXPECT_EQ(r[14], f32_bits(2.0f));
  EXPECT_EQ(r[15], f32_bits(1.5f));
  EXPECT_EQ(r[16], 0x7C00u);
  EXPECT_EQ(r[17], 0x7BFFu);
  EXPECT_EQ(r[18], 0x3F802000u);  // 1 + 2^-11 rounds away from zero into the 10th bit
  EXPECT_EQ(static_cast<std::int32_t>(r[19]), -1);  // truncated to 8 bits, then sign-extended
}

}  // namespace
}  // namespace warpforge::sim::testing
