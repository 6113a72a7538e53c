// The H100's departures from the PTX ISA's idealized text that the simulator
// models (docs/SIMULATOR.md, "Hardware rules the simulator models"): each
// case's input and expected bits are a case of the GPU recording
// (tests/gpu_truth/<family>.truth, NVIDIA H100 80GB HBM3, driver 13000),
// named by its unit and case number, with a control case where the rule does
// not apply.
#include "scalar_kernel.hpp"

namespace warpforge::sim::testing {
namespace {

using HardwareRules = ScalarKernel;

TEST_F(HardwareRules, BitField64TakesWholePositionAndLength) {  // integer_logic.truth
  auto r = results(R"(
    bfe.u64 %rd1, 0x09f9eeb0e4b88765, 26, 0x10a; mov.b64 {%o0, %o1}, %rd1;
    bfe.u64 %rd1, 0xfffffffffffffffe, 0x115, 0x15; mov.b64 {%o2, %o3}, %rd1;
    bfe.s64 %rd1, 0x8000000000000000, 10, 0x124; mov.b64 {%o4, %o5}, %rd1;
    bfe.s64 %rd1, 0x8000000000000000, 0x105, 10; mov.b64 {%o6, %o7}, %rd1;
    bfi.b64 %rd1, 0xffffffffffffffcc, 0xc, 5, 0x129; mov.b64 {%o8, %o9}, %rd1;
    bfi.b64 %rd1, 0x1b, 0xa75e885b791a737e, 0x116, 17; mov.b64 {%o10, %o11}, %rd1;
    bfe.u64 %rd1, 0x09f9eeb0e4b88765, 4, 8; mov.b64 {%o12, %o13}, %rd1;
    bfe.u32 %o14, 0x12345678, 0x104, 8;
  )",
                   15);
  EXPECT_EQ(r[0], 0x7e7bac39u);  // bfe.u64 case 26: a >> 26, len 266 keeps every bit
  EXPECT_EQ(r[1], 0x00000002u);
  EXPECT_EQ(r[2], 0u);  // case 60: pos 277 is past the width (not 277 mod 256 = 21)
  EXPECT_EQ(r[3], 0u);
  EXPECT_EQ(r[4], 0u);  // bfe.s64 case 38: an arithmetic shift by 10
  EXPECT_EQ(r[5], 0xffe00000u);
  EXPECT_EQ(r[6], 0xffffffffu);  // case 89: pos past the width fills with a's sign
  EXPECT_EQ(r[7], 0xffffffffu);
  EXPECT_EQ(r[8], 0xfffff98cu);  // bfi.b64 case 2: every bit of a from 5 up
  EXPECT_EQ(r[9], 0xffffffffu);
  EXPECT_EQ(r[10], 0x791a737eu);  // case 98: pos 278 leaves b as it is
  EXPECT_EQ(r[11], 0xa75e885bu);
  EXPECT_EQ(r[12], 0x76u);  // control: pos and len within the width
  EXPECT_EQ(r[13], 0u);
  EXPECT_EQ(r[14], 0x67u);  // control: 32-bit bfe takes pos mod 256 (the BFE instruction)
}

TEST_F(HardwareRules, NaNThroughConversions) {  // convert.truth
  auto r = results(R"(
    cvt.rn.f32.f64 %f1, 0d7FFD5A07984661D8;   mov.b32 %o0, %f1;
    cvt.rn.f16.f64 %h1, 0dFFF1EE7474D6EDA4;   cvt.u32.u16 %o1, %h1;
    mov.b32 %f2, 0fFF8AA3A3;
    cvt.f64.f32 %fd1, %f2; mov.b64 {%o2, %o3}, %fd1;
    mov.b32 %f2, 0fFF96E74B;
    cvt.ftz.f64.f32 %fd1, %f2; mov.b64 {%o4, %o5}, %fd1;
    mov.b16 %h2, 0x7cde;
    cvt.f64.f16 %fd1, %h2; mov.b64 {%o6, %o7}, %fd1;
    mov.b16 %h2, 0x7f93;
    cvt.f32.bf16 %f1, %h2;                    mov.b32 %o8, %f1;
    mov.b32 %f2, 0fFFB351E2;
    cvt.rna.tf32.f32 %o9, %f2;
    mov.b32 %f2, 0f7F91A4B6;
    cvt.rna.satfinite.tf32.f32 %o10, %f2;
    mov.b32 %f2, 0fFFC00000;
    cvt.rn.tf32.f32 %o11, %f2;
    cvt.rzi.f64.f64 %fd1, 0d7FF552300211D2B6; mov.b64 {%o12, %o13}, %fd1;
    mov.b32 %f2, 0f7FEA253D;
    cvt.rn.f16.f32 %h1, %f2;                  cvt.u32.u16 %o14, %h1;
  )",
                   15);
  EXPECT_EQ(r[0], 0x7fead03cu);  // cvt.rn.f32.f64 case 140: sign and leading payload
  EXPECT_EQ(r[1], 0xfe7bu);      // cvt.rz.f16.f64 case 88 (the rounding mode does not matter)
  EXPECT_EQ(r[2], 0x60000000u);  // cvt.f64.f32 case 238: quieted
  EXPECT_EQ(r[3], 0xfff95474u);
  EXPECT_EQ(r[4], 0xe0000000u);  // cvt.ftz.f64.f32 case 67: the canonical f32 NaN, widened
  EXPECT_EQ(r[5], 0x7fffffffu);
  EXPECT_EQ(r[6], 0u);  // cvt.f64.f16 case 69
  EXPECT_EQ(r[7], 0x7ffb7800u);
  EXPECT_EQ(r[8], 0x7f930000u);   // cvt.f32.bf16 case 1: not quieted
  EXPECT_EQ(r[9], 0xffb34000u);   // cvt.rna.tf32.f32 case 23: cut, not rounded, not quieted
  EXPECT_EQ(r[10], 0x7f918000u);  // cvt.rna.satfinite.tf32.f32 case 132: one unit less
  EXPECT_EQ(r[11], 0x7fffe000u);  // cvt.rn.tf32.f32 case 54
  EXPECT_EQ(r[12], 0x0211d2b6u);  // cvt.rzi.f64.f64 case 29: quieted
  EXPECT_EQ(r[13], 0x7ffd5230u);
  EXPECT_EQ(r[14], 0x7fffu);  // control: f32 -> f16 gives the canonical NaN
}

TEST_F(HardwareRules, SaturationAndIntegerDestinationsOfNaN) {  // convert.truth
  auto r = results(R"(
    mov.b32 %f2, 0fFFC00000;
    cvt.sat.f32.f32 %f1, %f2;                 mov.b32 %o0, %f1;
    mov.b32 %f2, 0f80000000;
    cvt.sat.f32.f32 %f1, %f2;                 mov.b32 %o1, %f1;
    mov.b32 %f2, 0f80000001;
    cvt.ftz.sat.f32.f32 %f1, %f2;             mov.b32 %o2, %f1;
    mov.b32 %f2, 0f7FEA253D;
    cvt.rn.sat.f16.f32 %h1, %f2;              cvt.u32.u16 %o3, %h1;
    cvt.rzi.s32.f64 %o4, 0dFFF8000000000000;
    cvt.rni.u32.f64 %o5, 0dFFFB8C04DFEDE38A;
    mov.b32 %f2, 0fFFBE5CB5;
    cvt.rni.s64.f32 %rd1, %f2; mov.b64 {%o6, %o7}, %rd1;
    mov.b32 %f2, 0f7FC00000;
    cvt.rzi.u64.f32 %rd1, %f2; mov.b64 {%o8, %o9}, %rd1;
    cvt.rzi.s32.f32 %o10, %f2;
  )",
                   11);
  EXPECT_EQ(r[0], 0u);           // cvt.sat.f32.f32 case 30: NaN -> +0
  EXPECT_EQ(r[1], 0u);           // case 195: -0 -> +0
  EXPECT_EQ(r[2], 0u);           // cvt.ftz.sat.f32.f32 case 7
  EXPECT_EQ(r[3], 0u);           // cvt.rn.sat.f16.f32 case 81
  EXPECT_EQ(r[4], 0x80000000u);  // f64 -> 32-bit integer: the sign bit alone
  EXPECT_EQ(r[5], 0x80000000u);  // cvt.rni.u32.f64 case 58, unsigned too
  EXPECT_EQ(r[6], 0u);           // cvt.rni.s64.f32 case 238
  EXPECT_EQ(r[7], 0x80000000u);
  EXPECT_EQ(r[8], 0u);  // cvt.rzi.u64.f32 case 103
  EXPECT_EQ(r[9], 0x80000000u);
  EXPECT_EQ(r[10], 0u);  // control: f32 -> 32-bit integer gives 0
}

TEST_F(HardwareRules, SignedZerosAbsNegAndF64NaN) {  // float_arith.truth
  auto r = results(R"(
    add.rm.f32 %f1, 0fBF800000, 0f3F800000;          mov.b32 %o0, %f1;
    fma.rm.ftz.f32 %f1, 0fC27FF335, 0f00000000, 0f00000001; mov.b32 %o1, %f1;
    add.rn.f32 %f1, 0fBF800000, 0f3F800000;          mov.b32 %o2, %f1;
    abs.f32 %f1, 0fFF92058D;                         mov.b32 %o3, %f1;
    neg.ftz.f32 %f1, 0f00000001;                     mov.b32 %o4, %f1;
    abs.ftz.f32 %f1, 0f80000001;                     mov.b32 %o5, %f1;
    mov.b16 %h2, 0x7e00;
    neg.f16 %h1, %h2;                                cvt.u32.u16 %o6, %h1;
    mov.b16 %h2, 0x8001;
    abs.ftz.f16 %h1, %h2;                            cvt.u32.u16 %o7, %h1;
    mov.b32 %r1, 0xb10c7e00;
    abs.f16x2 %o8, %r1;
    add.rz.f64 %fd1, 0d7FF4656C14D0C3E8, 0d7FF4656C14A85A0A; mov.b64 {%o9, %o10}, %fd1;
    fma.rz.f64 %fd1, 0d7FFED56C3665D5E9, 0dFFFA26E127139DCA, 0dBFE7A2FC9182C830; mov.b64 {%o11, %o12}, %fd1;
    sub.rz.f64 %fd1, 0dFFFE31CDC9EA9352, 0d7FFE31CDCA1DAD40; mov.b64 {%o13, %o14}, %fd1;
    abs.f64 %fd1, 0dFFF5B78E098B3E6E; mov.b64 {%o15, %o16}, %fd1;
    max.f64 %fd1, 0d7FF7892877F42D1C, 0d7FF7892874209C54; mov.b64 {%o17, %o18}, %fd1;
    neg.f64 %fd1, 0d3FF0000000000000; mov.b64 {%o19, %o20}, %fd1;
  )",
                   21);
  EXPECT_EQ(r[0], 0x80000000u);  // add.rm.f32 case 93: -1 + 1 rounded down is -0
  EXPECT_EQ(r[1], 0x80000000u);  // fma.rm.ftz.f32 case 119: -0 + (+0, flushed)
  EXPECT_EQ(r[2], 0u);           // control: to nearest, +0
  EXPECT_EQ(r[3], 0x7fffffffu);  // abs.f32 case 58: the canonical NaN
  EXPECT_EQ(r[4], 0x80000000u);  // neg.ftz.f32 case 19: flushed, then negated
  EXPECT_EQ(r[5], 0u);           // abs.ftz.f32 case 3
  EXPECT_EQ(r[6], 0x7fffu);      // neg.f16 case 15
  EXPECT_EQ(r[7], 0u);           // abs.ftz.f16 case 52
  EXPECT_EQ(r[8], 0x310c7fffu);  // abs.f16x2 case 13, element by element
  EXPECT_EQ(r[9], 0x14a85a0au);  // add.rz.f64 case 73: b's NaN, quieted
  EXPECT_EQ(r[10], 0x7ffc656cu);
  EXPECT_EQ(r[11], 0x27139dcau);  // fma.rz.f64 case 208: b's NaN before a's
  EXPECT_EQ(r[12], 0xfffa26e1u);
  EXPECT_EQ(r[13], 0xca1dad40u);  // sub.rz.f64 case 189: b's NaN, not negated
  EXPECT_EQ(r[14], 0x7ffe31cdu);
  EXPECT_EQ(r[15], 0x098b3e6eu);  // abs.f64 case 104: quieted, the sign kept
  EXPECT_EQ(r[16], 0xfffdb78eu);
  EXPECT_EQ(r[17], 0x74209c54u);  // max.f64 case 170: two NaNs give b's, quieted
  EXPECT_EQ(r[18], 0x7fff8928u);
  EXPECT_EQ(r[19], 0u);  // control: neg.f64 of 1.0
  EXPECT_EQ(r[20], 0xbff00000u);
}

// Found out of sample (float_arith.truth of seed 20261126): f64 fma takes
// c's NaN before a's (b's before both).
TEST_F(HardwareRules, F64FmaNaNOrderIsBThenCThenA) {  // seed20261126/float_arith.truth
  auto r = results(R"(
    fma.rn.f64 %fd1, 0d7FFBF425ABA62F76, 0dC12899DC80066213, 0d7FF21D291B0D2E22; mov.b64 {%o0, %o1}, %fd1;
    fma.rp.f64 %fd1, 0d7FF8000000000000, 0dC053DFFCD13B80B6, 0d7FFE1C29BFD13464; mov.b64 {%o2, %o3}, %fd1;
    fma.rn.f64 %fd1, 0d3FDD821C9B049866, 0d7FF8000000000000, 0d7FF51D525383AFB9; mov.b64 {%o4, %o5}, %fd1;
    add.rn.f64 %fd1, 0d7FFBF425ABA62F76, 0d7FF21D291B0D2E22; mov.b64 {%o6, %o7}, %fd1;
  )",
                   8);
  EXPECT_EQ(r[0], 0x1b0d2e22u);  // fma.rn.f64 case 126: c's signalling NaN, quieted, not a's
  EXPECT_EQ(r[1], 0x7ffa1d29u);
  EXPECT_EQ(r[2], 0xbfd13464u);  // fma.rp.f64 case 87: c's, not a's canonical NaN
  EXPECT_EQ(r[3], 0x7ffe1c29u);
  EXPECT_EQ(r[4], 0u);  // seed 0, fma.rn.f64 case 82: b's before c's signalling NaN
  EXPECT_EQ(r[5], 0x7ff80000u);
  EXPECT_EQ(r[6], 0x1b0d2e22u);  // control: add takes b's (the same two NaNs)
  EXPECT_EQ(r[7], 0x7ffa1d29u);
}

TEST_F(HardwareRules, FloatAtomicAddByStateSpace) {  // atomics.truth
  auto r = results(R"(
    ld.param.u64 %rd5, [out];
    st.global.b32 [%rd5], 0x00253ba5;
    atom.global.add.f32 %f1, [%rd5], 0f00000001;
    ld.global.b32 %o0, [%rd5];
    st.global.b32 [%rd5], 0x7fc00000;
    red.global.add.f32 [%rd5], 0f40372187;
    ld.global.b32 %o1, [%rd5];
    st.shared.b32 [buf], 0x00000001;
    atom.shared.add.f32 %f1, [buf], 0f00000001;
    ld.shared.b32 %o2, [buf];
    st.shared.b32 [buf], 0xff8d907a;
    atom.shared.add.f32 %f1, [buf], 0fBE8C4BB3;
    ld.shared.b32 %o3, [buf];
    st.global.b64 [%rd5+8], 0xfff8000000000000;
    atom.global.add.f64 %fd1, [%rd5+8], 0d7FFE5827F52832B1;
    ld.global.b64 %rd1, [%rd5+8]; mov.b64 {%o4, %o5}, %rd1;
    st.global.b64 [%rd5+8], 0x7ff372cfe6a7aaf7;
    atom.global.add.f64 %fd1, [%rd5+8], 0d8000000000000001;
    ld.global.b64 %rd1, [%rd5+8]; mov.b64 {%o6, %o7}, %rd1;
    st.shared.b64 [buf+8], 0x7ffcadafac714563;
    atom.shared.add.f64 %fd1, [buf+8], 0d7FF13672EECEECAF;
    ld.shared.b64 %rd1, [buf+8]; mov.b64 {%o8, %o9}, %rd1;
    st.shared.b64 [buf+8], 0x7ff5d592f8a4fb05;
    atom.shared.add.f64 %fd1, [buf+8], 0dBFD8F65F1070A4BB;
    ld.shared.b64 %rd1, [buf+8]; mov.b64 {%o10, %o11}, %rd1;
  )",
                   12);
  EXPECT_EQ(r[0], 0u);           // global f32 case 147: subnormals flushed
  EXPECT_EQ(r[1], 0x7fffffffu);  // global f32 case 12: the canonical NaN
  EXPECT_EQ(r[2], 2u);           // shared f32 case 91: subnormals kept
  EXPECT_EQ(r[3], 0x7fffffffu);  // shared f32 case 13
  EXPECT_EQ(r[4], 0xf52832b1u);  // global f64 case 227: b's NaN as it is
  EXPECT_EQ(r[5], 0x7ffe5827u);
  EXPECT_EQ(r[6], 0xe6a7aaf7u);  // global f64 case 35: the old signalling NaN, not quieted
  EXPECT_EQ(r[7], 0x7ff372cfu);
  EXPECT_EQ(r[8], 0xac714563u);  // shared f64 case 432: the old value's NaN first
  EXPECT_EQ(r[9], 0x7ffcadafu);
  EXPECT_EQ(r[10], 0xf8a4fb05u);  // shared f64 case 70: quieted
  EXPECT_EQ(r[11], 0x7ffdd592u);
}

TEST_F(HardwareRules, F32HexLiteralIsItsBitPattern) {
  // PTX ISA 4.5.1: 0f + 8 hex digits is the f32's bit pattern; a signalling
  // NaN stays one (the cases above take their NaN inputs from literals).
  auto r = results(R"(
    mov.f32 %f1, 0fFF8AA3A3;  mov.b32 %o0, %f1;
    mov.b32 %o1, 0f7F91A4B6;
  )",
                   2);
  EXPECT_EQ(r[0], 0xff8aa3a3u);
  EXPECT_EQ(r[1], 0x7f91a4b6u);
}

}  // namespace
}  // namespace warpforge::sim::testing
