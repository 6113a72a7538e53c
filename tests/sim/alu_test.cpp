// Integer, logic, comparison and floating-point arithmetic.
#include <cmath>

#include "scalar_kernel.hpp"

namespace warpforge::sim::testing {
namespace {

using Alu = ScalarKernel;

TEST_F(Alu, IntegerArithmetic) {
  auto r = results(R"(
    mov.u32 %r1, 0xFFFFFFF0;
    mov.u32 %r2, 7;
    mul.hi.u32 %o0, %r1, %r2;
    mul.hi.s32 %o1, %r1, %r2;
    mul.wide.s32 %rd1, %r1, %r2;
    cvt.u32.u64 %o2, %rd1;
    shr.u64 %rd1, %rd1, 32;
    cvt.u32.u64 %o3, %rd1;
    mad.lo.s32 %o4, %r1, %r2, 5;
    div.s32 %o5, %r1, %r2;
    rem.s32 %o6, %r1, %r2;
    div.u32 %o7, %r1, %r2;
    abs.s32 %o8, %r1;
    neg.s32 %o9, %r2;
    min.s32 %o10, %r1, %r2;
    min.u32 %o11, %r1, %r2;
    add.sat.s32 %o12, 0x7FFFFFF0, 0x100;
    sub.u32 %o13, 3, 5;
    mad.wide.u32 %rd2, %r2, 3, 0x100000000;
    shr.u64 %rd2, %rd2, 32;
    cvt.u32.u64 %o14, %rd2;
    mul.lo.u16 %h1, 300, 300;
    cvt.u32.u16 %o15, %h1;
  )",
                   16);
  EXPECT_EQ(r[0], 6u);           // (2^32-16)·7 >> 32
  EXPECT_EQ(r[1], 0xFFFFFFFFu);  // -16·7 = -112: high word -1
  EXPECT_EQ(r[2], static_cast<std::uint32_t>(-112));
  EXPECT_EQ(r[3], 0xFFFFFFFFu);
  EXPECT_EQ(r[4], static_cast<std::uint32_t>(-107));
  EXPECT_EQ(r[5], static_cast<std::uint32_t>(-2));  // truncation toward zero
  EXPECT_EQ(r[6], static_cast<std::uint32_t>(-2));
  EXPECT_EQ(r[7], 0xFFFFFFF0u / 7);
  EXPECT_EQ(r[8], 16u);
  EXPECT_EQ(r[9], static_cast<std::uint32_t>(-7));
  EXPECT_EQ(r[10], 0xFFFFFFF0u);
  EXPECT_EQ(r[11], 7u);
  EXPECT_EQ(r[12], 0x7FFFFFFFu);
  EXPECT_EQ(r[13], 0xFFFFFFFEu);
  EXPECT_EQ(r[14], 1u);
  EXPECT_EQ(r[15], (300u * 300u) & 0xFFFFu);
}

TEST_F(Alu, LogicShiftsAndBitManipulation) {
  auto r = results(R"(
    mov.u32 %r1, 0xF0F0F0F0;
    mov.u32 %r2, 0xCCCCCCCC;
    mov.u32 %r3, 0xAAAAAAAA;
    lop3.b32 %o0, %r1, %r2, %r3, 0xE8;
    lop3.b32 %o1, %r1, %r2, %r3, 0x96;
    prmt.b32 %o2, 0x33221100, 0x77665544, 0x7531;
    prmt.b32 %o3, 0x00008000, 0, 0x9999;
    shl.b32 %o4, 1, 33;
    shr.s32 %o5, 0x80000000, 40;
    shr.u32 %o6, 0x80000000, 31;
    bfe.u32 %o7, 0x12345678, 8, 12;
    bfe.s32 %o8, 0x0000F000, 12, 4;
    bfi.b32 %o9, 0xF, 0x11111111, 4, 8;
    popc.b32 %o10, %r1;
    clz.b32 %o11, 0x00010000;
    brev.b32 %o12, 1;
    not.b32 %o13, %r1;
    cnot.b32 %o14, 0;
    xor.b32 %o15, %r1, %r2;
    popc.b64 %o16, -1;
  )",
                   17);
  EXPECT_EQ(r[0], (0xF0F0F0F0u & 0xCCCCCCCCu) | (0xF0F0F0F0u & 0xAAAAAAAAu) |
                      (0xCCCCCCCCu & 0xAAAAAAAAu));  // majority
  EXPECT_EQ(r[1], 0xF0F0F0F0u ^ 0xCCCCCCCCu ^ 0xAAAAAAAAu);
  EXPECT_EQ(r[2], 0x77553311u);
  EXPECT_EQ(r[3], 0xFFFFFFFFu);  // selector 9: byte 1 (0x80) sign-replicated
  EXPECT_EQ(r[4], 0u);
  EXPECT_EQ(r[5], 0xFFFFFFFFu);
  EXPECT_EQ(r[6], 1u);
  EXPECT_EQ(r[7], 0x456u);
  EXPECT_EQ(r[8], 0xFFFFFFFFu);
  EXPECT_EQ(r[9], 0x111110F1u);
  EXPECT_EQ(r[10], 16u);
  EXPECT_EQ(r[11], 15u);
  EXPECT_EQ(r[12], 0x80000000u);
  EXPECT_EQ(r[13], 0x0F0F0F0Fu);
  EXPECT_EQ(r[14], 1u);
  EXPECT_EQ(r[15], 0x3C3C3C3Cu);
  EXPECT_EQ(r[16], 64u);
}

TEST_F(Alu, SetpEveryComparisonCombinationAndPairs) {
  auto r = results(R"(
    setp.lt.s32 %p1, -1, 1;     selp.u32 %o0, 1, 0, %p1;
    setp.lo.u32 %p1, -1, 1;     selp.u32 %o1, 1, 0, %p1;
    setp.hs.u32 %p1, -1, 1;     selp.u32 %o2, 1, 0, %p1;
    setp.ls.u32 %p1, 4, 4;      selp.u32 %o3, 1, 0, %p1;
    setp.hi.u32 %p1, 4, 4;      selp.u32 %o4, 1, 0, %p1;
    setp.ge.s64 %p1, -5, -5;    selp.u32 %o5, 1, 0, %p1;
    mov.f32 %f1, 0f7FC00000;
    setp.lt.f32 %p1, %f1, 1.0;  selp.u32 %o6, 1, 0, %p1;
    setp.ltu.f32 %p1, %f1, 1.0; selp.u32 %o7, 1, 0, %p1;
    setp.ne.f32 %p1, %f1, %f1;  selp.u32 %o8, 1, 0, %p1;
    setp.neu.f32 %p1, %f1, %f1; selp.u32 %o9, 1, 0, %p1;
    setp.nan.f32 %p1, %f1, 1.0; selp.u32 %o10, 1, 0, %p1;
    setp.num.f32 %p1, %f1, 1.0; selp.u32 %o11, 1, 0, %p1;
    setp.eq.f32 %p1, 0f80000000, 0f00000000; selp.u32 %o12, 1, 0, %p1;
    setp.gt.and.s32 %p2|%p3, 5, 3, 1;
    selp.u32 %o13, 1, 0, %p2;
    selp.u32 %o14, 1, 0, %p3;
    setp.eq.u32 %p4, 0, 1;
    setp.gt.or.s32 %p2|%p3, 5, 3, %p4;
    selp.u32 %o15, 1, 0, %p3;
    setp.lt.xor.s32 %p2, 5, 3, !%p4;
    selp.u32 %o16, 1, 0, %p2;
    setp.geu.f64 %p1, 0d3FF0000000000000, 0d4000000000000000; selp.u32 %o17, 1, 0, %p1;
  )",
                   18);
  const std::vector<std::uint32_t> want = {1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1, 0};
  EXPECT_EQ(r, want);
}

TEST_F(Alu, FloatRoundingModesFtzAndSat) {
  // 1 + 2^-30 is not an f32: the modes pick its neighbours.
  auto r = results(R"(
    mov.f32 %f1, 0f3F800000;
    mov.f32 %f2, 0f30800000;
    add.rn.f32 %f3, %f1, %f2;   mov.b32 %o0, %f3;
    add.rz.f32 %f3, %f1, %f2;   mov.b32 %o1, %f3;
    add.rp.f32 %f3, %f1, %f2;   mov.b32 %o2, %f3;
    sub.rm.f32 %f3, %f1, %f2;   mov.b32 %o3, %f3;
    sub.rz.f32 %f3, %f1, %f2;   mov.b32 %o4, %f3;
    div.rn.f32 %f3, 1.0, 3.0;   mov.b32 %o5, %f3;
    div.rz.f32 %f3, 1.0, 3.0;   mov.b32 %o6, %f3;
    fma.rz.f32 %f3, %f1, %f1, %f2; mov.b32 %o7, %f3;
    mul.ftz.f32 %f3, 0f00400000, 1.0; mov.b32 %o8, %f3;
    mul.f32 %f3, 0f00400000, 1.0; mov.b32 %o9, %f3;
    add.sat.f32 %f3, 1.0, 0.5;  mov.b32 %o10, %f3;
    mul.sat.f32 %f3, 0f7FC00000, 1.0; mov.b32 %o11, %f3;
    min.f32 %f3, 0f7FC00000, 2.0; mov.b32 %o12, %f3;
    max.f32 %f3, -1.0, 2.0;     mov.b32 %o13, %f3;
    sqrt.rn.f32 %f3, 2.0;       mov.b32 %o14, %f3;
    rcp.rn.f32 %f3, 4.0;        mov.b32 %o15, %f3;
    abs.f32 %f3, -3.0;          mov.b32 %o16, %f3;
    neg.f32 %f3, 3.0;           mov.b32 %o17, %f3;
    add.rz.f64 %fd1, 0d3FF0000000000000, 0d3C00000000000000;
    mov.b64 %rd1, %fd1;
    cvt.u32.u64 %o18, %rd1;
    add.rp.f64 %fd1, 0d3FF0000000000000, 0d3C00000000000000;
    mov.b64 %rd1, %fd1;
    cvt.u32.u64 %o19, %rd1;
  )",
                   20);
  EXPECT_EQ(r[0], 0x3F800000u);
  EXPECT_EQ(r[1], 0x3F800000u);
  EXPECT_EQ(r[2], 0x3F800001u);
  EXPECT_EQ(r[3], 0x3F7FFFFFu);
  EXPECT_EQ(r[4], 0x3F7FFFFFu);
  EXPECT_EQ(r[5], f32_bits(1.0f / 3.0f));
  EXPECT_EQ(r[6], f32_bits(1.0f / 3.0f) - 1);  // 1/3 rounds up to nearest, so rz is one below
  EXPECT_EQ(r[7], 0x3F800000u);
  EXPECT_EQ(r[8], 0u);  // subnormal flushed
  EXPECT_EQ(r[9], 0x00400000u);
  EXPECT_EQ(r[10], f32_bits(1.0f));
  EXPECT_EQ(r[11], 0u);  // .sat turns NaN into +0
  EXPECT_EQ(r[12], f32_bits(2.0f));
  EXPECT_EQ(r[13], f32_bits(2.0f));
  EXPECT_EQ(r[14], f32_bits(std::sqrt(2.0f)));
  EXPECT_EQ(r[15], f32_bits(0.25f));
  EXPECT_EQ(r[16], f32_bits(3.0f));
  EXPECT_EQ(r[17], f32_bits(-3.0f));
  EXPECT_EQ(r[18], 0u);  // 1 + 2^-63 toward zero: 1.0 (low word 0)
  EXPECT_EQ(r[19], 1u);  // toward +inf: the next double
}

TEST_F(Alu, HalfAndPackedHalfArithmetic) {
  auto r = results(R"(
    mov.b32 %r1, 0x40003E00;
    mov.b32 %r2, 0xBC003400;
    add.f16x2 %o0, %r1, %r2;
    mul.f16x2 %o1, %r1, %r2;
    fma.rn.f16x2 %o2, %r1, %r2, %r1;
    mov.b32 %r3, 0x40003FC0;
    mov.b32 %r4, 0x3F803F80;
    add.bf16x2 %o3, %r3, %r4;
    mov.b16 %h1, 0x3C00;
    mov.b16 %h2, 0x1200;
    add.rn.f16 %h3, %h1, %h2;
    cvt.u32.u16 %o4, %h3;
    add.rz.f16 %h3, %h1, %h2;
    cvt.u32.u16 %o5, %h3;
    mov.b32 %r5, 0xC4003C00;
    setp.lt.f16x2 %p1|%p2, %r2, %r5;
    selp.u32 %o6, 1, 0, %p1;
    selp.u32 %o7, 1, 0, %p2;
  )",
                   8);
  EXPECT_EQ(r[0], 0x3C003F00u);  // {1.5+0.25, 2-1}
  EXPECT_EQ(r[1], 0xC0003600u);  // {0.375, -2}
  EXPECT_EQ(r[2], 0x00003F80u);  // {1.5·0.25+1.5, 2·-1+2}
  EXPECT_EQ(r[3], 0x40404020u);  // bf16 {2+1, 1.5+1}
  EXPECT_EQ(r[4], 0x3C01u);      // 1 + 0.75·2^-10 to nearest
  EXPECT_EQ(r[5], 0x3C00u);      // and toward zero
  EXPECT_EQ(r[6], 1u);           // low halves: 0.25 < 1
  EXPECT_EQ(r[7], 0u);           // high halves: -1 < -4 is false
}

}  // namespace
}  // namespace warpforge::sim::testing
