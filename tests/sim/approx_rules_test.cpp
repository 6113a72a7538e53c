// The H100's .approx rules that the simulator models (src/sim/approx_functions.cpp,
// docs/SIMULATOR.md): each case's input and expected bits are a case of the
// GPU recording (tests/gpu_truth/float_approx.truth, NVIDIA H100 80GB HBM3,
// driver 13000), named by its unit and case number; each shows where the
// rule gives other bits than the idealized function would.
#include <cmath>

#include "../../src/sim/mufu_table.hpp"
#include "scalar_kernel.hpp"

namespace warpforge::sim::testing {
namespace {

using ApproxRules = ScalarKernel;

float f32_from(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST_F(ApproxRules, RcpApproxF64KeepsTwentyBitsOfTheHighWord) {
  auto r = results(R"(
    rcp.approx.ftz.f64 %fd1, 0d33B045DBDFECB8DE; mov.b64 {%o0, %o1}, %fd1;
    rcp.approx.ftz.f64 %fd1, 0d77D3111E4F8E52EE; mov.b64 {%o2, %o3}, %fd1;
    rcp.approx.ftz.f64 %fd1, 0d80067E2133FE1DA9; mov.b64 {%o4, %o5}, %fd1;
    rcp.approx.ftz.f64 %fd1, 0dFFEFFFFFFFFFFFFD; mov.b64 {%o6, %o7}, %fd1;
    rcp.approx.ftz.f64 %fd1, 0d7FF8000000000000; mov.b64 {%o8, %o9}, %fd1;
    rcp.approx.ftz.f64 %fd1, 0d0010000000000000; mov.b64 {%o10, %o11}, %fd1;
    rcp.rn.f64 %fd1, 0d33B045DBDFECB8DE; mov.b64 {%o12, %o13}, %fd1;
  )",
                   14);
  EXPECT_EQ(r[0], 0u);  // case 0: the f32 reciprocal, cut, is above the true high word
  EXPECT_EQ(r[1], 0x4c2f76a1u);
  EXPECT_EQ(r[2], 0u);  // case 2: below it (the cut)
  EXPECT_EQ(r[3], 0x080ada55u);
  EXPECT_EQ(r[4], 0u);  // case 7: a subnormal operand is flushed: -inf
  EXPECT_EQ(r[5], 0xfff00000u);
  EXPECT_EQ(r[6], 0u);  // case 8: a subnormal result is flushed: -0
  EXPECT_EQ(r[7], 0x80000000u);
  EXPECT_EQ(r[8], 0u);  // case 26: a NaN gives 0x7FFFFFFF00000000
  EXPECT_EQ(r[9], 0x7fffffffu);
  EXPECT_EQ(r[10], 0u);  // case 1: a power of two is exact
  EXPECT_EQ(r[11], 0x7fd00000u);
  EXPECT_EQ(r[12], 0x0dbf238du);  // control: rcp.rn.f64 is correctly rounded
  EXPECT_EQ(r[13], 0x4c2f76a0u);
}

TEST_F(ApproxRules, RsqrtApproxF64IsCorrectlyRounded) {
  auto r = results(R"(
    rsqrt.approx.f64 %fd1, 0d3FF77D1FBA1283A9; mov.b64 {%o0, %o1}, %fd1;
    rsqrt.approx.f64 %fd1, 0d7FEFFFFFFFFFFFFF; mov.b64 {%o2, %o3}, %fd1;
    rsqrt.approx.f64 %fd1, 0d3FEDE8B9112460C2; mov.b64 {%o4, %o5}, %fd1;
    rsqrt.approx.f64 %fd1, 0dC02E0A1C817A68E9; mov.b64 {%o6, %o7}, %fd1;
    rsqrt.approx.f64 %fd1, 0d7FF3663C820DF691; mov.b64 {%o8, %o9}, %fd1;
    rsqrt.approx.f64 %fd1, 0d8000000000000000; mov.b64 {%o10, %o11}, %fd1;
    sqrt.rn.f64 %fd1, 0d3FF77D1FBA1283A9; rcp.rn.f64 %fd1, %fd1; mov.b64 {%o12, %o13}, %fd1;
  )",
                   14);
  EXPECT_EQ(r[0], 0x7c9e3a60u);  // case 11: 1/sqrt rounded once
  EXPECT_EQ(r[1], 0x3fea6923u);
  EXPECT_EQ(r[2], 0u);  // case 17: the largest finite operand
  EXPECT_EQ(r[3], 0x1ff00000u);
  EXPECT_EQ(r[4], 0x89e6b8ffu);  // case 23
  EXPECT_EQ(r[5], 0x3ff08cc1u);
  EXPECT_EQ(r[6], 0u);  // case 1: a negative operand gives 0xFFF8000000000000
  EXPECT_EQ(r[7], 0xfff80000u);
  EXPECT_EQ(r[8], 0x820df691u);  // case 347: a NaN operand, quieted
  EXPECT_EQ(r[9], 0x7ffb663cu);
  EXPECT_EQ(r[10], 0u);  // -0 gives -inf
  EXPECT_EQ(r[11], 0xfff00000u);
  EXPECT_EQ(r[12], 0x7c9e3a61u);  // control: rounded twice, one ulp off case 11
  EXPECT_EQ(r[13], 0x3fea6923u);
}

TEST_F(ApproxRules, DivApproxIsTheReciprocalTimesA) {
  auto r = results(R"(
    div.approx.f32 %o0, 0f3F98DEC8, 0f41D1B9F9;
    div.approx.f32 %o1, 0fC3B80436, 0f42A03374;
    div.approx.f32 %o2, 0fC45A3EC2, 0f7F7FFFFF;
    div.approx.ftz.f32 %o3, 0f3EFB9275, 0f7F7FFFFF;
    div.rn.f32 %o4, 0f3F98DEC8, 0f41D1B9F9;
    div.full.f32 %o5, 0fC45A3EC2, 0f7F7FFFFF;
  )",
                   6);
  EXPECT_EQ(r[0], 0x3d3a9962u);  // div.approx.f32 case 8: a·RN(1/b), not RN(a/b)
  EXPECT_EQ(r[1], 0xc093074au);  // case 11
  EXPECT_EQ(r[2], 0x80000000u);  // case 114: |b| >= 2^126, the reciprocal flushed
  EXPECT_EQ(r[3], 0u);           // div.approx.ftz.f32 case 59
  EXPECT_EQ(r[4], 0x3d3a9963u);  // control: the quotient rounded once
  EXPECT_NE(r[5], 0x80000000u);  // control: div.full keeps the tiny quotient
}

// ptxas fuses div.full's multiply by the reciprocal (and a mul) with the adds
// and subs that are the product's only uses (src/sim/contraction.hpp; the recorded truth is
// Triton's layer_norm on an H200, tests/gpu_truth/triton/layer_norm.*,
// replayed by python/tests/test_triton_replay.py): here a, c and b = 48
// where rounding the quotient first gives another last bit.
TEST_F(ApproxRules, ProductsAreContractedWithTheSumsThatReadThem) {
  auto r = results(R"(
    div.full.f32 %f1, 0f41AD1E6D, 0f42400000; add.f32 %o0, %f1, 0f3D541227;
    div.full.f32 %f2, 0f41AD1E6D, 0f42400000; sub.f32 %o1, %f2, 0f3D541227;
    div.full.f32 %f3, 0f41AD1E6D, 0f42400000; sub.f32 %o2, 0f3D541227, %f3;
    rcp.approx.f32 %f0, 0f42400000;
    fma.rn.f32 %o3, 0f41AD1E6D, %f0, 0f3D541227;
    fma.rn.f32 %o4, 0f41AD1E6D, %f0, 0fBD541227;
    fma.rn.f32 %o5, 0fC1AD1E6D, %f0, 0f3D541227;
    div.full.f32 %f4, 0f41AD1E6D, 0f42400000; add.rn.f32 %o6, %f4, 0f3D541227;
    div.full.f32 %f5, 0f41AD1E6D, 0f42400000; add.f32 %o7, %f5, 0f3D541227; mov.b32 %o8, %f5;
    div.full.f32 %f6, 0f41AD1E6D, 0f42400000; bra NEXT;
  NEXT:
    add.f32 %o9, %f6, 0f3D541227;
    mul.f32 %f7, 0f41AD1E6D, %f0; add.f32 %o10, %f7, 0f3D541227; sub.f32 %o11, %f7, 0f3D541227;
  )",
                   12);
  EXPECT_EQ(r[0], r[3]);  // d + c: fma(a, rcp(b), c)
  EXPECT_EQ(r[1], r[4]);  // d - c: fma(a, rcp(b), -c)
  EXPECT_EQ(r[2], r[5]);  // c - d: fma(-a, rcp(b), c)
  EXPECT_NE(r[0], r[6]);  // control: add.rn is not contracted, and rounds the quotient first
  EXPECT_EQ(r[7], r[6]);  // a quotient also read by a mov is not contracted
  EXPECT_EQ(r[9], r[6]);  // nor one used in another block
  EXPECT_EQ(r[10], r[3]);  // a product read by two sums is contracted into each (a mul by rcp(b) here)
  EXPECT_EQ(r[11], r[4]);
}

// Found out of sample (float_approx.truth of seed 20261126, and seed 0's
// cases that follow the same rules).
TEST_F(ApproxRules, DivScalesSubnormalAndHugeDivisors) {
  auto r = results(R"(
    div.approx.f32 %o0, 0f8CC0C94B, 0f80000001;
    div.approx.f32 %o1, 0fC2DD1CBF, 0f80000001;
    div.full.f32 %o2, 0fBFA0A452, 0fC3F9A727;
    div.rn.f32 %o3, 0fBFA0A452, 0fC3F9A727;
    div.full.f32 %o4, 0fC2A519B7, 0f7F7FFFFD;
    div.full.f32 %o5, 0f4444C5E3, 0f7F7FFFFF;
    div.rn.f32 %o6, 0fC2A519B7, 0f7F7FFFFD;
    div.approx.f32 %o7, 0fC2A519B7, 0f7F7FFFFD;
  )",
                   8);
  // div.approx.f32 case 737: b = -2^-149 is scaled by 2^24 with a, so 1/b
  // does not overflow: the quotient, not an infinity.
  EXPECT_EQ(r[0], 0x5740c94bu);
  EXPECT_EQ(r[1], 0x7f800000u);  // seed 0 case 76: a quotient past FLT_MAX stays +inf
  // div.full.f32, seed 0 case 16: RN(1/b)·a, not the quotient rounded once
  EXPECT_EQ(r[2], 0x3b24b9d8u);
  EXPECT_EQ(r[3], 0x3b24b9d9u);  // control: div.rn
  // |b| > 2^126 (cases 40 and 259): a and b scaled by 1/4, so the subnormal
  // quotient is one rounding of the scaled product, neither the quotient
  // rounded once (control) nor div.approx's flushed reciprocal (control).
  EXPECT_EQ(r[4], 0x82a519bau);
  EXPECT_EQ(r[5], 0x0444c5e5u);
  EXPECT_EQ(r[6], 0x82a519b9u);
  EXPECT_EQ(r[7], 0x80000000u);
}

TEST_F(ApproxRules, SinCosReduceTheAngleInF32) {
  auto r = results(R"(
    sin.approx.f32 %o0, 0f664372B0;
    sin.approx.f32 %o1, 0fEDF2FBC2;
    sin.approx.f32 %o2, 0fCBBD29CE;
    cos.approx.f32 %o3, 0f6C9B7796;
    cos.approx.f32 %o4, 0fFF7FFFFF;
    sin.approx.f32 %o5, 0fC2FAF03F;
    cos.approx.f32 %o6, 0f42E8A75E;
    sin.approx.ftz.f32 %o7, 0f7F800000;
  )",
                   8);
  // |a| past 2^24 turns: the turns are an integer.
  EXPECT_EQ(r[0], 0u);           // sin case 41
  EXPECT_EQ(r[1], 0x80000000u);  // sin case 69: a zero of the turns' sign
  EXPECT_EQ(r[2], 0xbf800000u);  // sin case 935: turns cut toward zero to k + 3/4
  EXPECT_EQ(r[3], 0x3f800000u);  // cos case 3
  EXPECT_EQ(r[4], 0x3f800000u);  // cos case 11: the largest finite operand
  // Near 100 the reduction's error shows: the H100's value, not sin(a).
  const double bound = std::exp2(-21.5);
  EXPECT_NEAR(f32_from(r[5]), f32_from(0x3e45e809u), bound);  // sin case 569
  EXPECT_GT(std::fabs(std::sin(-125.46923065185547) - f32_from(0x3e45e809u)), 8 * bound);
  EXPECT_NEAR(f32_from(r[6]), f32_from(0xbf7f02afu), bound);  // cos case 143
  EXPECT_EQ(r[7], 0x7fffffffu);                               // an infinity gives the canonical NaN
}

// The multifunction unit's f32 forms (src/sim/mufu_f32.cpp), from the H200
// sweep of 2026-11-29 (scripts/gpu-triton-mufu.sh; not in the repository,
// 17 MiB): each case is one where the unit's result is not the correctly
// rounded one (given beside it), which the simulator's tables reproduce.
TEST_F(ApproxRules, MultifunctionUnitResultsAreTheH200s) {
  auto r = results(R"(
    rcp.approx.ftz.f32 %o0, 0f3F8005A9;
    rcp.approx.f32 %o1, 0f3FB9D696;
    sqrt.approx.ftz.f32 %o2, 0f3F801000;
    sqrt.approx.f32 %o3, 0f4000AEB4;
    rsqrt.approx.ftz.f32 %o4, 0f3F800001;
    rsqrt.approx.f32 %o5, 0f3FF9AD44;
    ex2.approx.ftz.f32 %o6, 0fBF7FFFFE;
    ex2.approx.f32 %o7, 0fBDF1ED70;
    ex2.approx.ftz.f32 %o8, 0f33FFFFFF;
    ex2.approx.ftz.f32 %o9, 0fC2FAD0D4;
    ex2.approx.f32 %o10, 0fC2FED966;
    div.full.f32 %o11, 0f3F800000, 0f3F8005A9;
  )",
                   12);
  EXPECT_EQ(r[0], 0x3f7ff4aeu);   // correctly rounded: 0x3f7ff4af
  EXPECT_EQ(r[1], 0x3f30534du);   // 0x3f30534e
  EXPECT_EQ(r[2], 0x3f8007ffu);   // 0x3f800800
  EXPECT_EQ(r[3], 0x3fb58051u);   // 0x3fb58052
  EXPECT_EQ(r[4], 0x3f7ffffeu);   // 0x3f7fffff
  EXPECT_EQ(r[5], 0x3f374c15u);   // 0x3f374c16
  EXPECT_EQ(r[6], 0x3f000000u);   // 2^-0.9999999: 0x3f000001
  EXPECT_EQ(r[7], 0x3f6bdfb0u);   // 0x3f6bdfb1
  EXPECT_EQ(r[8], 0x3f800000u);   // 2^(2^-23 - 2^-47): x cut to 0, 1; not 0x3f800001
  EXPECT_EQ(r[9], 0x00c0f4e3u);   // -125.40787: 2^-125 · 2^-0.40787; 0x00c0f4e4
  EXPECT_EQ(r[10], 0x002faec4u);  // -127.42461, a subnormal: ex2(x/2) squared; 0x002faec5
  EXPECT_EQ(r[11], r[0]);         // div.full of 1 is the reciprocal
}

// The tables' encoding (src/sim/mufu_table.hpp): these bytes are what
// tools/difftest/mufu_tables.py's encoder writes for 40 entries in 2
// intervals (coefficients 0.5, -0.25, 1 and 2, 0, -1.5), residuals nonzero
// at 0 (+1), 3 (-1), 17 (+3) and 39 (-2).
TEST(MufuTable, DecodesTheEncodersBytes) {
  const std::vector<std::uint8_t> bytes = {
      0x57, 0x46, 0x4d, 0x43, 0x02, 0x02, 0x01, 0x00, 0x28, 0x00, 0x00, 0x00, 0x04, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0x3f, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0xd0, 0xbf, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0xbf, 0x02, 0xb9, 0x6f, 0x9c};
  const MufuTable t = decode_mufu_table(bytes, 40);
  std::vector<std::int8_t> want(40, 0);
  want[0] = 1;
  want[3] = -1;
  want[17] = 3;
  want[39] = -2;
  EXPECT_EQ(t.residual, want);
  ASSERT_EQ(t.coefficients.size(), 2u);
  EXPECT_EQ(t.coefficients[0][1], -0.25);
  EXPECT_EQ(t.coefficients[1][2], -1.5);
  // Input 17 of interval 0 (t = 17/20·2 − 1 = 0.7): floor(F·2^24 + e + 1/2) + 3
  // with e = 0.5 − 0.25·0.7 + 0.49 = 0.815.
  const double F = 0.75 + 0x1p-25;  // 12582912.5 units
  EXPECT_EQ(t.result(17, F),
            static_cast<float>((std::floor(F * 0x1p24 + 0.815 + 0.5) + 3) * 0x1p-24));
  EXPECT_THROW(decode_mufu_table(bytes, 41), SimError);                       // another size
  EXPECT_THROW(decode_mufu_table(std::span(bytes).first(66), 40), SimError);  // cut short
  std::vector<std::uint8_t> other = bytes;
  other[4] = 1;  // another version
  EXPECT_THROW(decode_mufu_table(other, 40), SimError);
}

}  // namespace
}  // namespace warpforge::sim::testing
