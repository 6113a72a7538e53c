// Misuse of the DSL is refused at build time with a warpforge::Error subtype
// whose message names the kernel, the instruction and the offending value.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dsl/dsl_test_support.hpp"

namespace warpforge::dsl {
namespace {

using testing_support::throws_with;

// Builds `body` into a kernel named "bad_use" and checks that it is refused
// with exactly `E`, the message naming the kernel and each of `needles`.
template <class E = DslError>
::testing::AssertionResult refused(Target target, const std::function<void(Kernel&)>& body,
                                   std::vector<std::string> needles) {
  Kernel k("bad_use", target);
  needles.insert(needles.begin(), "kernel 'bad_use'");
  return throws_with<E>([&] { body(k); }, needles);
}
template <class E = DslError>
::testing::AssertionResult refused(const std::function<void(Kernel&)>& body,
                                   std::vector<std::string> needles) {
  return refused<E>(Target::sm_80, body, std::move(needles));
}

// ---- mma.sync fragments ------------------------------------------------------------

constexpr const char* kBf16K16 = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";

// An m16n8k16 bf16 mma whose fragments `spoil` has altered first.
struct Fragments {
  Regs d, a, b, c;
};
void bf16_mma_with(Kernel& k, const std::function<void(Kernel&, Fragments&)>& spoil) {
  Fragments f{k.regs(f32, 4, "d"), k.regs(b32, 4, "a"), k.regs(b32, 2, "b"), k.regs(f32, 4, "c")};
  spoil(k, f);
  k.mma_sync(MmaShape::m16n8k16, bf16, bf16, f32, f.d, f.a, f.b, f.c);
}

TEST(BadMma, WrongRegisterCountOfEachFragment) {
  struct Case {
    const char* role;
    std::function<void(Kernel&, Fragments&)> spoil;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"D has 3 registers", [](Kernel&, Fragments& f) { f.d.pop_back(); }, "takes 4"},
      {"A has 5 registers", [](Kernel& k, Fragments& f) { f.a.push_back(k.reg(b32)); }, "takes 4"},
      {"B has 1 registers", [](Kernel&, Fragments& f) { f.b.pop_back(); }, "takes 2"},
      {"C has 2 registers", [](Kernel&, Fragments& f) { f.c.resize(2); }, "takes 4"},
  };
  for (const auto& c : cases)
    EXPECT_TRUE(
        refused([&](Kernel& k) { bf16_mma_with(k, c.spoil); }, {kBf16K16, c.role, c.expected}))
        << c.role;
}

TEST(BadMma, WrongRegisterTypeOfEachFragment) {
  struct Case {
    std::function<void(Kernel&, Fragments&)> spoil;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Kernel& k, Fragments& f) { f.d[1] = k.reg(u32, "wrong"); },
       "D %wrong has type u32; expected f32"},
      {[](Kernel& k, Fragments& f) { f.a[2] = k.reg(f16, "wrong"); },
       "A %wrong has type f16; expected b32"},
      {[](Kernel& k, Fragments& f) { f.b[0] = k.reg(u64, "wrong"); },
       "B %wrong has type u64; expected b32"},
      {[](Kernel& k, Fragments& f) { f.c[3] = k.reg(s32, "wrong"); },
       "C %wrong has type s32; expected f32"},
      {[](Kernel& k, Fragments& f) { f.a[0] = k.reg(f32, "wrong"); },
       "A %wrong has type f32; packed fragments are b32"},
  };
  for (const auto& c : cases)
    EXPECT_TRUE(refused([&](Kernel& k) { bf16_mma_with(k, c.spoil); }, {kBf16K16, c.message}))
        << c.message;
}

TEST(BadMma, TypeCombinationsOutsideTheShape) {
  auto mma = [](MmaShape shape, Type a, Type b, Type acc) {
    return [=](Kernel& k) {
      k.mma_sync(shape, a, b, acc, k.regs(f32, 4), k.regs(b32, 4), k.regs(b32, 2), k.regs(f32, 4));
    };
  };
  EXPECT_TRUE(refused(mma(MmaShape::m16n8k16, f16, bf16, f32),
                      {"mma.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32",
                       "A and B types f16, bf16", "accepted:"}));
  EXPECT_TRUE(refused(mma(MmaShape::m16n8k8, bf16, bf16, f16),
                      {"mma.sync.aligned.m16n8k8.row.col.f16.bf16.bf16.f16",
                       "accumulator type f16 with bf16 inputs"}));
  EXPECT_TRUE(refused(Target::sm_89, mma(MmaShape::m16n8k32, f16, f16, f32),
                      {"m16n8k32", "operand types f16×f16→f32 are not an m16n8k32 form"}));
  EXPECT_TRUE(
      refused(Target::sm_89, mma(MmaShape::m16n8k32, e4m3, e4m3, f16), {"m16n8k32", "→f16"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        Regs acc = k.regs(f32, 2, "acc");
        k.mma_sync(MmaShape::m16n8k8, f16, f16, f16, acc, k.regs(b32, 2), k.regs(b32, 1), acc);
      },
      {"mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
       "D %acc0 has type f32; packed fragments are b32"}));
}

// ---- instructions missing on the target --------------------------------------------

// ---- vector mov (pack, unpack) and the f32-only approximations ----------------------

TEST(BadAlu, PartsThatDoNotSplitTheRegisterAndApproximationsOfOtherTypes) {
  EXPECT_TRUE(refused([](Kernel& k) { k.unpack(k.regs(b16, 3), k.reg(b32)); },
                      {"mov.b32", "3 parts", "2 or 4 parts"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.pack(k.reg(b64), k.regs(b16, 2)); },
                      {"mov.b64", "is b16", "32 bits"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.rsqrt_approx(k.reg(f64), k.reg(f64)); },
                      {"rsqrt.approx takes f32", "is f64"}));
}

TEST(BadTarget, InstructionsMissingOnTheTargetNameTheTargetsThatHaveThem) {
  EXPECT_TRUE(
      refused<TargetError>([](Kernel& k) { k.stmatrix(at(k.reg(u32)), k.regs(b32, 4)); },
                           {"stmatrix.sync.aligned.m8n8.x4.shared.b16", "not available on sm_80",
                            "targets that have it: sm_90a, sm_100a"}));
  EXPECT_TRUE(refused<TargetError>(
      [](Kernel& k) {
        k.mma_sync(MmaShape::m16n8k32, e4m3, e4m3, f32, k.regs(f32, 4), k.regs(b32, 4),
                   k.regs(b32, 2), k.regs(f32, 4));
      },
      {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "not available on sm_80",
       "targets that have it: sm_89, sm_90a, sm_100a"}));
  EXPECT_TRUE(
      refused<TargetError>(Target::sm_89, [](Kernel& k) { k.sreg(SReg::cluster_ctarank); },
                           {"mov %cluster_ctarank", "not available on sm_89", "sm_90a, sm_100a"}));
  EXPECT_TRUE(refused<TargetError>(Target::sm_89, [](Kernel& k) { k.sreg("clusterid.y"); },
                                   {"mov %clusterid.y", "not available on sm_89"}));
  EXPECT_TRUE(refused<TargetError>(
      [](Kernel& k) {
        Reg h = k.reg(bf16);
        k.add(h, h, h);
      },
      {"add.bf16", "not available on sm_80", "sm_90a, sm_100a"}));
  EXPECT_TRUE(refused<TargetError>([](Kernel& k) { k.cvt(k.reg(f32), k.reg(bf16)); },
                                   {"cvt.f32.bf16", "not available on sm_80"}));
}

TEST(BadTarget, UnknownSpecialRegisterByName) {
  EXPECT_TRUE(refused([](Kernel& k) { k.sreg("%tid.w"); },
                      {"mov", "unknown special register '%tid.w'", "known: %tid.x"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.mov(u64, SReg::tid_x); },
                      {"mov %tid.x", "is u32; cannot read it as u64"}));
}

// ---- the generic inst() ------------------------------------------------------------

TEST(BadInst, ArityOfKnownOpcodesIsChecked) {
  EXPECT_TRUE(refused([](Kernel& k) { k.inst("add.u32", k.reg(u32), k.reg(u32)); },
                      {"add.u32", "takes 3 operands, got 2"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.inst("cvt.rn.f32.s32", k.reg(f32), k.reg(s32), 1, 2, 3); },
                      {"cvt.rn.f32.s32", "takes 2 to 4 operands, got 5"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.inst("ret", 1); }, {"ret", "takes 0 operands, got 1"}));
}

// ---- types -------------------------------------------------------------------------

// imm(): a 32-bit immediate from a 64-bit value; one no 32-bit word holds is
// refused, naming it, rather than cut.
TEST(BadInst, ImmediatesThatDoNotFit32BitsAreRefused) {
  EXPECT_EQ(imm(0xFFFFFFFFll), 0xFFFFFFFFu);
  EXPECT_EQ(imm(-1), 0xFFFFFFFFu);
  EXPECT_EQ(imm(-(1ll << 31)), 0x80000000u);
  EXPECT_TRUE(throws_with<DslError>([] { imm(1ll << 32); }, {"4294967296", "32-bit word"}));
  EXPECT_TRUE(throws_with<DslError>([] { imm(-(1ll << 31) - 1); }, {"-2147483649"}));
}

TEST(BadTypes, OperatorsOnMixedOrFloatRegisters) {
  EXPECT_TRUE(refused([](Kernel& k) { k.reg(u32, "x") + k.reg(f32, "y"); },
                      {"add.u32", "operand b %y has type f32; expected u32"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.reg(f32, "y") + 1; },
                      {"operator+", "operand %y is f32; operators are for integer registers"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.reg(f64, "y") & 1; }, {"operator&", "%y is f64"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.reg(f32, "y") < 1; },
                      {"setp.lt.f32", "integer immediate 1 for a f32 operand"}));
  EXPECT_TRUE(refused([](Kernel& k) { -k.reg(u32, "x"); },
                      {"neg", "%x is u32; negation needs a signed type"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.reg(u32, "x") << k.reg(u64, "n"); },
                      {"shl.b32", "shift amount %n has type u64; expected u32"}));
}

TEST(BadTypes, WrapperOperandsAndViews) {
  EXPECT_TRUE(refused([](Kernel& k) { k.add(k.reg(f32, "d"), k.reg(f32), 1); },
                      {"add.f32", "source b integer immediate 1 for a f32 operand"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.mov(k.reg(u32), k.reg(f32, "f").as(b32)); },
                      {"mov.u32", "source %f is declared .f32"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.reg(f32, "f").as(u64); },
                      {"as", "%f of type f32 cannot be read as u64"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.setp(Cmp::equ, k.reg(u32, "x"), 1); },
                      {"setp.equ.u32", ".equ is a float comparison; the operands are u32"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.setp(Cmp::lt, k.reg(f16x2, "x"), k.reg(f16x2)); },
                      {"setp.lt.f16x2", "writes two predicates"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.setp(Cmp::lo, k.reg(s32, "x"), 1); },
                      {"setp.lo.s32", ".lo compares unsigned integers"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.add(k.reg(f64, "d"), k.reg(f64), k.reg(f64), {.ftz = true}); },
              {"add.ftz.f64", ".ftz and .sat apply to f32"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.add(k.reg(u32, "d"), k.reg(u32), 1, {.sat = true}); },
                      {"add.u32", ".sat on integers is add.sat.s32 and sub.sat.s32 only"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.mul(k.reg(s32, "d"), k.reg(s32), 2, {.sat = true}); },
                      {"mul.s32", "add.sat.s32 and sub.sat.s32 only"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.min(k.reg(f32, "d"), k.reg(f32), k.reg(f32), {Round::rn}); },
              {"min.rn.f32", "min takes no rounding mode"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.fma(k.reg(bf16, "d"), k.reg(bf16), k.reg(bf16), k.reg(bf16), {Round::rn, true});
      },
      {"fma.rn.ftz.bf16", ".ftz and .sat do not apply to bf16"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.div(k.reg(f16, "d"), k.reg(f16), k.reg(f16)); },
                      {"div.rn.f16", "%d is f16; div takes f32 or f64"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.rcp(k.reg(f16x2, "d"), k.reg(f16x2)); },
                      {"rcp.f16x2", "%d is f16x2; rcp takes f32 or f64"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.add(k.reg(u8, "d"), k.reg(u8), 1); },
                      {"add.u8", "%d is u8; integer arithmetic is 16, 32 or 64 bits wide"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.reg(s8, "x") * 2; }, {"operator*", "%x is s8"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.popc(k.reg(u32), k.reg(u16, "h")); },
                      {"popc.b16", "source %h is u16; popc takes 32- or 64-bit values"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.brev(k.reg(b16, "h"), k.reg(b16)); }, {"brev.b16", "%h is b16"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cvt(k.reg(s32), k.reg(f64), {.ftz = true}); },
                      {"cvt.s32.f64", ".ftz applies to conversions from or to f32"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cvt(k.reg(bf16), k.reg(f32), {.sat = true}); },
                      {"cvt.bf16.f32", ".sat does not apply to bf16 results"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.cvt_pack(f16x2, k.reg(b32), k.reg(f32), k.reg(f32), {Round::rn, true});
      },
      {"cvt.f16x2.f32", "takes no .ftz or .sat"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.cvt(k.reg(f32), k.reg(f64), {.round = Round::rn, .relu = true}); },
              {"cvt.f32.f64", ".relu applies to f16 and bf16 results, not f32"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.fma(k.reg(f32, "d"), k.reg(f32), k.reg(f32), k.reg(f32), {}); },
              {"fma.f32", "fma needs a rounding mode"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.sqrt(k.reg(f64, "d"), k.reg(f64)); },
                      {"sqrt.approx.f64", "give %d a rounding mode"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) { k.redux_sync(Redux::add, k.reg(f32, "d"), k.reg(f32)); },
      {"redux.sync.add.f32", "destination %d is f32; redux.sync add/min/max take u32 or s32"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) { k.atom(Space::global, AtomOp::inc, s32, k.reg(s32), at(k.reg(u64)), 1); },
      {"atom.global.inc.s32", "type s32 is not allowed for .inc; allowed: u32"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) { k.atom(Space::global, AtomOp::cas, b32, k.reg(b32), at(k.reg(u64)), 1); },
      {"atom.global.cas.b32", "cas needs the swap value c"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.red(Space::global, AtomOp::exch, b32, at(k.reg(u64)), 1); },
                      {"red", "red has no .exch"}));
  // The vector red (PTX ISA 9.7.13.8): global add.f32 of 2 or 4 registers, sm_90.
  const auto four = [](Kernel& k, Type t) { return Regs{k.reg(t), k.reg(t), k.reg(t), k.reg(t)}; };
  EXPECT_TRUE(refused(Target::sm_90a,
                      [&](Kernel& k) { k.red(Space::shared, AtomOp::add, f32, at(k.reg(u32)), four(k, f32)); },
                      {"red.shared.add.f32", "a vector red acts on global memory only, not .shared"}));
  EXPECT_TRUE(refused(Target::sm_90a,
                      [&](Kernel& k) { k.red(Space::global, AtomOp::add, u32, at(k.reg(u64)), four(k, u32)); },
                      {"red.global.add.u32", "a vector red adds f32 (red.global.add.v4.f32); not .add.u32"}));
  EXPECT_TRUE(refused(Target::sm_90a,
                      [](Kernel& k) {
                        k.red(Space::global, AtomOp::add, f32, at(k.reg(u64)), Regs{k.reg(f32), k.reg(f32), k.reg(f32)});
                      },
                      {"red.global.add.f32", "vector of 3 registers; .v2 or .v4 only"}));
  EXPECT_TRUE(refused<TargetError>(
      [&](Kernel& k) { k.red(Space::global, AtomOp::add, f32, at(k.reg(u64)), four(k, f32)); },
      {"red.global.add.f32", "not available on sm_80", "targets that have it: sm_90a, sm_100a"}));
}

TEST(BadTypes, CvtRoundingModeMisuse) {
  EXPECT_TRUE(refused(
      [](Kernel& k) { k.cvt(k.reg(f32), k.reg(s32), {Round::rzi}); },
      {"cvt.f32.s32", "integer-to-float conversion takes a float rounding mode", "got .rzi"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cvt(k.reg(s32), k.reg(f32), {Round::rn}); },
                      {"cvt.s32.f32", "needs an integer rounding mode", "got .rn"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cvt(k.reg(f64), k.reg(f32), {Round::rn}); },
                      {"cvt.f64.f32", "widening f32 to f64 is exact"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.cvt(k.reg(f16), k.reg(f32), {Round::rni}); },
              {"cvt.f16.f32", "narrowing f32 to f16 takes a float rounding mode", "got .rni"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cvt(k.reg(f32), k.reg(f32), {Round::rn}); },
                      {"cvt.f32.f32", "rounds to an integral value", "got .rn"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cvt(k.reg(u32), k.reg(s32), {Round::rn}); },
                      {"cvt.u32.s32", "integer-to-integer conversion takes no rounding mode"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cvt(k.reg(u32), k.reg(u16), {.sat = true}); },
                      {"cvt.u32.u16", ".sat cannot clamp: every u16 value fits in u32"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cvt(tf32, f32, k.reg(b32), k.reg(f32), {Round::rm}); },
                      {"cvt.tf32.f32", "got .rm"}));
  EXPECT_TRUE(refused(
      Target::sm_89,
      [](Kernel& k) { k.cvt_pack(e4m3x2, k.reg(b16), k.reg(f32), k.reg(f32), {Round::rz}); },
      {"cvt.e4m3x2.f32", "fp8 packing takes .rn"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.cvt_pack(f16x2, k.reg(b32), k.reg(f32), k.reg(f32), {Round::rm}); },
              {"cvt.f16x2.f32", "takes .rn or .rz"}));
}

TEST(BadBits, FunnelShiftAndSymbolAddresses) {
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.shf(ShfDir::l, ShfMode::wrap, k.reg(b64, "w"), k.reg(b32), k.reg(b32), 3);
      },
      {"shf.l.wrap.b32", "%w is b64; shf writes a 32-bit integer"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.mov(k.reg(f32, "x"), Symbol{"table"}); },
                      {"mov.f32 table", "32- or 64-bit integer or bit register; %x is f32"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.mov(k.reg(u16, "h"), Symbol{"table"}); },
                      {"mov.u16 table", "%h is u16"}));
}

// ---- memory ------------------------------------------------------------------------

TEST(BadMemory, VectorWidthsAndModifiers) {
  EXPECT_TRUE(refused([](Kernel& k) { k.ld(Space::global, b32, k.regs(b32, 3), at(k.reg(u64))); },
                      {"ld.global", "vector of 3 registers; .v2 or .v4 only"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.st(Space::shared, f64, at(k.reg(u32)), k.regs(f64, 4)); },
                      {"st.shared", "a .v4.f64 access moves 32 bytes; at most 16"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.ld(Space::global, b32, k.reg(b32), at(k.reg(u32, "p"))); },
              {"ld.global.b32", "address register %p is u32; global addresses are 64-bit"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) { k.ld(Space::local, b32, k.reg(b32), at(k.reg(u64)), {.volatile_ = true}); },
      {"ld.volatile.local",
       ".volatile applies to the global and shared spaces and generic addresses, not .local"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.st(Space::generic, b32, at(k.reg(u32, "a")), 1); },
                      {"st.b32", "address register %a is u32; generic addresses are 64-bit"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) { k.ld(Space::generic, b32, k.reg(b32), at(k.reg(u64)), {.nc = true}); },
      {"ld", ".nc loads read the global space only"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) { k.ld(Space::tex, b32, k.reg(b32), at(k.reg(u64))); },
      {"ld",
       "state space .tex is not addressable; use global, shared, local, param, const or generic"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.ld(Space::global, b32, k.reg(b32), at(k.reg(u64)),
             {.cache = Cache::cg, .volatile_ = true});
      },
      {"ld.volatile.global", ".volatile takes no cache operator"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.ld(Space::global, b32, k.reg(b32), at(k.reg(u64)), {.cache = Cache::lu, .nc = true});
      },
      {"ld.global.nc", "cache operator .lu does not combine with .nc"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.st(Space::global, b32, at(k.reg(u64)), 1, {.cache = Cache::ca}); },
              {"st.global", "cache operator .ca is not a store operator"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.st(Space::const_, b32, at(k.reg(u64)), 1); },
                      {"st.const", "the const space is read-only"}));
  EXPECT_TRUE(refused(Target::sm_90a,
                      [](Kernel& k) { k.bulk_copy_to_cluster(at(k.reg(u32)), at(k.reg(u32)), 24, at(k.reg(u32))); },
                      {"cp.async.bulk.shared::cluster.shared::cta", "size 24; a bulk copy moves a positive multiple of 16 bytes"}));
  EXPECT_TRUE(refused(Target::sm_90a,
                      [](Kernel& k) { k.bulk_copy_to_cluster(at(k.reg(u32)), at(k.reg(u32)), k.reg(u64, "n"), at(k.reg(u32))); },
                      {"cp.async.bulk.shared::cluster.shared::cta", "size %n has type u64; expected u32"}));
  EXPECT_TRUE(refused(Target::sm_90a,
                      [](Kernel& k) { k.bulk_reduce_add_f32(at(k.reg(u64)), at(k.reg(u32)), 40); },
                      {"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32",
                       "size 40; a bulk copy moves a positive multiple of 16 bytes"}));
  // st.shared::cluster: the shared space only, no .volatile, sm_90 on.
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) { k.st(Space::global, b32, at(k.reg(u64)), 1, {.cluster = true}); },
                      {"st.global", "a shared::cluster access names the shared space, not .global"}));
  EXPECT_TRUE(refused(Target::sm_90a,
                      [](Kernel& k) { k.st(Space::shared, b32, at(k.reg(u32)), 1, {.volatile_ = true, .cluster = true}); },
                      {"st.volatile.shared", "a shared::cluster store takes no .volatile"}));
  EXPECT_TRUE(refused<TargetError>(Target::sm_89,
                                   [](Kernel& k) { k.st(Space::shared, b32, at(k.reg(u32)), 1, {.cluster = true}); },
                                   {"st.shared::cluster", "not available on sm_89"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.st(Space::param, b32, k.param_bytes("blob", 8, 4), 1); },
                      {"st.param", "kernel parameters are read-only"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cvta_to(Space::reg, k.reg(u64), k.reg(u64)); },
                      {"cvta.to: state space .reg has no generic-address window"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.ldmatrix(k.regs(b32, 3), at(k.reg(u32))); },
                      {"ldmatrix", "3 registers; x1, x2 or x4"}));
}

TEST(BadMemory, CpAsyncSizes) {
  EXPECT_TRUE(
      refused([](Kernel& k) { k.cp_async(CpAsyncCache::cg, 8, at(k.reg(u32)), at(k.reg(u64))); },
              {"cp.async.cg.shared.global", "copy size 8", ".cg copies 16 bytes only"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.cp_async(CpAsyncCache::ca, 2, at(k.reg(u32)), at(k.reg(u64))); },
              {"cp.async.ca.shared.global", "copy size 2; 4, 8 or 16 bytes"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.cp_async_wait(-1); },
                      {"cp.async.wait_group", "pending group count -1"}));
  // The L2 prefetch size is PTX ISA 7.4; sm_80 kernels are emitted as 7.0.
  EXPECT_TRUE(refused([](Kernel& k) {
                        k.cp_async(CpAsyncCache::cg, 16, at(k.reg(u32)), at(k.reg(u64)), std::nullopt, L2Prefetch::b256);
                      },
                      {"cp.async.cg.shared.global.L2::256B", "an L2 prefetch size needs PTX ISA 7.4",
                       "target sm_80 emits 7.0"}));
}

// ---- barriers ----------------------------------------------------------------------

TEST(BadBarrier, IdsAndCounts) {
  EXPECT_TRUE(
      refused([](Kernel& k) { k.bar_sync(16); }, {"bar.sync", "barrier id 16; ids are 0 to 15"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.bar_arrive(1, 48); }, {"bar.arrive", "thread count 48"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.barrier_sync(2, 0); }, {"barrier.sync", "thread count 0"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.barrier_sync(17, 64); }, {"barrier.sync", "barrier id 17; ids are 0 to 15"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.bar_sync(k.reg(u64, "id")); },
                      {"bar.sync", "barrier id %id has type u64; expected u32"}));
}

// ---- ownership, labels, names ------------------------------------------------------

TEST(BadHandles, RegisterOfAnotherKernel) {
  Kernel other("other", Target::sm_80);
  Reg foreign = other.reg(u32, "theirs");
  EXPECT_TRUE(refused([&](Kernel& k) { k.add(k.reg(u32), foreign, 1); },
                      {"add.u32", "register %theirs belongs to kernel 'other'"}));
  EXPECT_TRUE(refused([&](Kernel& k) { k.reg(u32) + foreign; },
                      {"add.u32", "%theirs belongs to kernel 'other'"}));
  Pred their_pred = other.pred("q");
  EXPECT_TRUE(refused([&](Kernel& k) { k.bra_if(their_pred, k.label()); },
                      {"predicate %q belongs to kernel 'other'"}));
  Label their_label = other.label("there");
  EXPECT_TRUE(refused([&](Kernel& k) { k.bra(their_label); },
                      {"label $there_0 belongs to kernel 'other'"}));
}

TEST(BadHandles, UninitialisedHandles) {
  EXPECT_TRUE(refused([](Kernel& k) { k.bra_if(Pred{}, k.label()); }, {"uninitialised predicate"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.guarded(Pred{}, [] {}); }, {"uninitialised predicate"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.mov(k.reg(u32), Reg{}); }, {"mov.u32", "uninitialised register"}));
  EXPECT_TRUE(throws_with<DslError>([] { Reg{} + 1; }, {"operator+", "uninitialised register"}));
}

TEST(BadLabels, UsedButNeverPlacedOrPlacedTwice) {
  Kernel k("bad_use", Target::sm_80);
  Label nowhere = k.label("nowhere");
  k.bra(nowhere);
  EXPECT_TRUE(throws_with<DslError>(
      [&] { k.module(); },
      {"kernel 'bad_use'", "bra", "label $nowhere_0 is used but never placed"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        Label l = k.label();
        k.place(l);
        k.place(l);
      },
      {"$L_0:", "label placed twice"}));
}

TEST(BadNames, DuplicatesAreRefused) {
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.param(u32, "n");
        k.param(s32, "n");
      },
      {".param", "name 'n' is already declared as a parameter"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.param_ptr("A");
        k.param_bytes("A", 128, 64);
      },
      {".param", "name 'A' is already declared as a parameter"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.reg(f32, "acc");
        k.pred("acc");
      },
      {".reg", "register name '%acc' is already declared"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.regs(b32, 4, "a");
        k.reg(b32, "a2");
      },
      {".reg", "'%a2' is already declared"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.shared("tile", 64);
        k.shared("tile", 128);
      },
      {".shared", "name 'tile' is already declared as a shared variable"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.param(u32, "n");
        k.shared("n", 16);
      },
      {".shared", "name 'n' is already declared as a parameter"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.dynamic_shared("smem");
        k.shared("smem", 16);
      },
      {".shared", "name 'smem' is already declared as the dynamic shared array"}));
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        k.dynamic_shared("smem");
        k.dynamic_shared("other");
      },
      {".extern .shared", "already declared as 'smem'"}));
}

TEST(BadNames, IdentifiersAreChecked) {
  EXPECT_TRUE(throws_with<DslError>([] { Kernel k("9lives", Target::sm_80); },
                                    {"kernel name '9lives' is not a PTX identifier"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.reg(u32, "r5"); }, {".reg", "register name 'r5' is not usable"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.regs(f32, 2, "f"); },
                      {".reg", "register array name 'f' is an automatic prefix"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.reg(u32, "two words"); }, {".reg", "'two words'"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.param(u32, "a-b"); },
                      {".param", "parameter name 'a-b' is not an identifier"}));
  EXPECT_TRUE(
      refused([](Kernel& k) { k.shared("x.y", 4); }, {".shared", "'x.y' is not an identifier"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.label("no-dash"); }, {"label", "label hint 'no-dash'"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.param(b128, "wide"); },
                      {".param", "parameter 'wide' of type b128"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.param_ptr("p", 12); },
                      {".param", "alignment 12 is not a power of two"}));
}

// ---- guards and control flow -------------------------------------------------------

TEST(BadGuards, GuardedBlocksDoNotNest) {
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        Pred p = k.pred("p"), q = k.pred("q");
        k.guarded(p, [&] { k.guarded(!q, [] {}); });
      },
      {"@!%q", "guarded blocks do not nest", "already inside @%p"}));
  // A self-guarded branch (if_then's) inside a guarded block would lose the block's guard.
  EXPECT_TRUE(refused(
      [](Kernel& k) {
        Pred p = k.pred("p"), q = k.pred("q");
        k.guarded(p, [&] { k.if_then(q, [] {}); });
      },
      {"bra", "guarded by @!%q inside guarded(@%p); guards do not nest"}));
}

TEST(BadControl, LoopBounds) {
  EXPECT_TRUE(refused([](Kernel& k) { k.for_range(0, 10, 0, [](Reg) {}); },
                      {"for_range", "step 0 must be positive"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.for_range(k.reg(f32), 10, 1, [](Reg) {}); },
                      {"for_range", "loop bounds must be integers; got f32"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.for_nonempty_range(0, 10, -2, [](Reg) {}); },
                      {"for_nonempty_range", "step -2 must be positive"}));
}

}  // namespace
}  // namespace warpforge::dsl

namespace warpforge::dsl {
namespace {

// ---- Hopper: wgmma, setmaxnreg, TMA --------------------------------------------------

TEST(BadHopper, WgmmaAccumulatorCountOutsideTheShapes) {
  for (int regs : {2, 6, 130}) {
    EXPECT_TRUE(refused(Target::sm_90a, [regs](Kernel& k) {
      k.wgmma_mma_async(bf16, k.regs(f32, regs), k.reg(b64), k.reg(b64), false, WgmmaMajor::k, WgmmaMajor::k);
    }, {"wgmma.mma_async", std::to_string(regs) + " accumulator registers", "multiple of 8 in 8..256"}));
  }
}

TEST(BadHopper, WgmmaOperandAndAccumulatorTypes) {
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(f32, k.regs(f32, 4), k.reg(b64), k.reg(b64), false, WgmmaMajor::k, WgmmaMajor::k);
  }, {"operand types f32×f32", "accepted: bf16×bf16 or f16×f16 (m64nNk16), e4m3/e5m2 × e4m3/e5m2 (m64nNk32)"}));
  // 16-bit A and B must match; 16-bit and 8-bit do not mix.
  for (auto [a, b] : {std::pair{bf16, f16}, std::pair{e4m3, bf16}})
    EXPECT_TRUE(refused(Target::sm_90a, [a, b](Kernel& k) {
      k.wgmma_mma_async(a, b, k.regs(f32, 4), k.reg(b64), k.reg(b64), false, WgmmaMajor::k, WgmmaMajor::k);
    }, {".f32." + std::string(ptx::name(a)) + "." + std::string(ptx::name(b)),
        "operand types " + std::string(ptx::name(a)) + "×" + std::string(ptx::name(b)), "accepted:"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(bf16, k.regs(b32, 4, "acc"), k.reg(b64), k.reg(b64), false, WgmmaMajor::k, WgmmaMajor::k);
  }, {"accumulator", "%acc0"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(bf16, k.regs(f32, 4), k.reg(u32, "da"), k.reg(b64), false, WgmmaMajor::k, WgmmaMajor::k);
  }, {"A descriptor", "%da"}));
}

TEST(BadHopper, Fp8WgmmaOperandsAreKMajorOnly) {
  // PTX ISA 9.7.15.5.2: the 8-bit forms have no imm-trans-a/b.
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(e4m3, e5m2, k.regs(f32, 8), k.reg(b64), k.reg(b64), false, WgmmaMajor::mn, WgmmaMajor::k);
  }, {"wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e5m2", "A is MN-major with e4m3 elements",
      "must be K-major (WgmmaMajor::k)"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(e5m2, k.regs(f32, 8), k.reg(b64), k.reg(b64), true, WgmmaMajor::k, WgmmaMajor::mn);
  }, {"m64n16k32.f32.e5m2.e5m2", "B is MN-major with e5m2 elements", "WgmmaMajor::k"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(e4m3, e4m3, k.regs(f32, 8), k.regs(b32, 4), k.reg(b64), false, WgmmaMajor::mn);
  }, {"m64n16k32.f32.e4m3.e4m3", "B is MN-major with e4m3 elements"}));
}

TEST(BadHopper, WgmmaRegisterAFragment) {
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(bf16, bf16, k.regs(f32, 4), k.regs(b32, 2), k.reg(b64), false, WgmmaMajor::k);
  }, {"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", "A from registers has 2 registers",
      "4 b32 registers per thread"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(e4m3, e4m3, k.regs(f32, 4), k.regs(f32, 4, "fa"), k.reg(b64), false, WgmmaMajor::k);
  }, {"m64n8k32.f32.e4m3.e4m3", "A register %fa0 is f32, declared .f32", "go in .b32 registers"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(f16, f16, k.regs(f32, 4), k.regs(b16, 4, "h"), k.reg(b64), false, WgmmaMajor::k);
  }, {"A register %h0 is b16, declared .b16", "(b32, u32, s32, f16x2 or bf16x2 handles)"}));
  // The checks the two A forms share: accumulators and B's descriptor.
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(bf16, bf16, k.regs(f32, 6), k.regs(b32, 4), k.reg(b64), false, WgmmaMajor::k);
  }, {"6 accumulator registers", "multiple of 8 in 8..256"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    k.wgmma_mma_async(bf16, bf16, k.regs(f32, 4), k.regs(b32, 4), k.reg(u32, "db"), false, WgmmaMajor::k);
  }, {"B descriptor", "%db"}));
}

TEST(BadHopper, WaitGroupAndRegisterCounts) {
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) { k.wgmma_wait_group(8); }, {"pending group count 8", "0..7"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) { k.setmaxnreg_inc(100); },
                      {"setmaxnreg.inc", "register count 100", "multiple of 8 in 24..256"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) { k.setmaxnreg_dec(16); }, {"register count 16"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) { k.bulk_wait_group_read(-1); }, {"pending group count -1"}));
}

TEST(BadHopper, TensorCopyCoordinatesAndMapType) {
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    Shared t = k.shared("t", 128), b = k.shared("b", 8, 8);
    k.tma_load(at(t), k.reg(u64), {1, 2, 3, 4, 5, 6}, at(b));
  }, {"cp.async.bulk.tensor: 6 coordinates", "1 to 5"}));
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) {
    Shared t = k.shared("t", 128);
    k.tma_store(k.reg(u32, "map"), {0, 0}, at(t));
  }, {"tensor map address", "%map"}));
}

TEST(BadHopper, RemoteArriveScope) {
  EXPECT_TRUE(refused(Target::sm_90a, [](Kernel& k) { k.mbarrier_arrive_cluster(k.reg(u32), Scope::gpu); },
                      {"mbarrier_arrive_cluster", "scope gpu", ".cta or .cluster"}));
}

TEST(BadUse, AValueReturningFormNeedsATypedSource) {
  EXPECT_TRUE(
      refused([](Kernel& k) { k.div(7, 2); }, {"div", "both sources are integer literals"}));
  EXPECT_TRUE(refused([](Kernel& k) { k.selp(1, 0, k.pred()); }, {"selp", "make one a register"}));
  // The wrapper's own checks still apply: min of an f32 and an s32.
  EXPECT_TRUE(refused([](Kernel& k) { k.min(k.reg(f32), k.reg(s32)); }, {"min"}));
}

TEST(BadBlackwell, Tcgen05Misuse) {
  const Target bw = Target::sm_100a;
  EXPECT_TRUE(refused(bw,
                      [](Kernel& k) {
                        k.tcgen05_relinquish_alloc_permit(CtaGroup::one);
                        k.tcgen05_commit(CtaGroup::two, k.reg(u32));
                      },
                      {"tcgen05.commit", "uses cta_group::2 after this kernel's tcgen05 instructions used cta_group::1",
                       "names the same .cta_group"}));
  EXPECT_TRUE(refused(bw, [](Kernel& k) { k.tcgen05_alloc(CtaGroup::one, at(k.reg(u32)), 48); },
                      {"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", "column count 48",
                       "a power of two in 32..512"}));
  EXPECT_TRUE(refused(bw, [](Kernel& k) { k.tcgen05_dealloc(CtaGroup::one, k.reg(b32), 1024); },
                      {"tcgen05.dealloc", "column count 1024"}));
  EXPECT_TRUE(refused(bw,
                      [](Kernel& k) { k.tcgen05_commit_multicast(CtaGroup::two, k.reg(u32), 3); },
                      {"tcgen05.commit.cta_group::2", "CTA mask 3 is an immediate",
                       "ptxas takes it in a 16-bit register"}));
  EXPECT_TRUE(refused(bw,
                      [](Kernel& k) {
                        k.tcgen05_mma(CtaGroup::one, Tcgen05Kind::mxf4, k.reg(b32), k.reg(b64), k.reg(b64),
                                      k.reg(b32), true);
                      },
                      {"kind::mxf4 is block-scaled", "tcgen05_mma_block_scale"}));
  EXPECT_TRUE(refused(bw,
                      [](Kernel& k) {
                        k.tcgen05_mma_block_scale(CtaGroup::one, Tcgen05Kind::mxf8f6f4, ScaleVec::x2, k.reg(b32),
                                                  k.reg(b64), k.reg(b64), k.reg(b32), k.reg(b32), k.reg(b32), true);
                      },
                      {"tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::2X",
                       "scale_vec::2X with kind::mxf8f6f4", "mxf8f6f4 with 1X, mxf4 with 2X, mxf4nvf4 with 2X or 4X"}));
  EXPECT_TRUE(refused(bw,
                      [](Kernel& k) {
                        k.tcgen05_mma_block_scale(CtaGroup::one, Tcgen05Kind::f16, ScaleVec::x1, k.reg(b32),
                                                  k.reg(b64), k.reg(b64), k.reg(b32), k.reg(b32), k.reg(b32), true);
                      },
                      {"kind::f16 takes no scale factors"}));
  EXPECT_TRUE(refused(bw,
                      [](Kernel& k) {
                        k.tcgen05_mma(CtaGroup::one, Tcgen05Kind::f16, k.reg(b32), k.reg(b32, "adesc"),
                                      k.reg(b64), k.reg(b32), true);
                      },
                      {"A descriptor %adesc has type b32; expected b64"}));
  EXPECT_TRUE(refused(bw, [](Kernel& k) { k.tcgen05_ld(TmemShape::lanes16_bits256, k.regs(b32, 6), k.reg(b32)); },
                      {"tcgen05.ld.sync.aligned.16x256b", "6 registers", "4 register(s) per thread times .num"}));
  EXPECT_TRUE(refused(bw, [](Kernel& k) { k.tcgen05_ld(TmemShape::lanes32_bits32, k.regs(b32, 256), k.reg(b32)); },
                      {"256 registers", "a power of two up to 128"}));
  EXPECT_TRUE(refused(bw, [](Kernel& k) { k.tcgen05_st(TmemShape::lanes32_bits32, k.reg(b32), k.regs(f64, 2, "w")); },
                      {"tcgen05.st.sync.aligned.32x32b.x2.b32", "register %w0 is f64",
                       "tensor-memory cells are 32 bits"}));
  EXPECT_TRUE(refused(
      bw, [](Kernel& k) { k.tcgen05_ld_16x32bx2(k.regs(b32, 3), k.reg(b32), 16); },
      {"tcgen05.ld.sync.aligned.16x32bx2", "3 registers", "1 register(s) per thread times .num"}));
  EXPECT_TRUE(refused(bw,
                      [](Kernel& k) {
                        k.tcgen05_mma_ws(Tcgen05Kind::mxf4, k.reg(b32), k.reg(b64), k.reg(b64),
                                         k.reg(b32), true);
                      },
                      {"tcgen05.mma.ws",
                       "kind::mxf4; the weight-stationary MMA takes kinds f16, tf32 and f8f6f4"}));
  EXPECT_TRUE(refused(bw,
                      [](Kernel& k) {
                        k.tcgen05_mma_ws(Tcgen05Kind::f16, k.reg(b32), k.reg(b64), k.reg(b64),
                                         k.reg(b32), true, Collector{4, CollectorUsage::use});
                      },
                      {"collector buffer b4; the weight-stationary MMA has buffers b0..b3"}));
  EXPECT_TRUE(refused(
      bw,
      [](Kernel& k) {
        k.tcgen05_alloc(CtaGroup::two, at(k.reg(u32)), 32);
        k.tcgen05_mma_ws(Tcgen05Kind::f16, k.reg(b32), k.reg(b64), k.reg(b64), k.reg(b32), true);
      },
      {"tcgen05.mma.ws",
       "uses cta_group::1 after this kernel's tcgen05 instructions used cta_group::2"}));
  EXPECT_TRUE(refused(
      bw,
      [](Kernel& k) {
        k.tcgen05_mma_sp(CtaGroup::one, Tcgen05Kind::f16, k.reg(b32), k.reg(b64), k.reg(b64),
                         k.reg(u64, "meta"), k.reg(b32), true);
      },
      {"tcgen05.mma.sp.cta_group::1.kind::f16", "sparsity metadata address %meta has type u64"}));
  EXPECT_TRUE(refused<TargetError>(Target::sm_90a, [](Kernel& k) { k.tcgen05_wait_ld(); },
                                   {"tcgen05.wait::ld.sync.aligned", "not available on sm_90a",
                                    "targets that have it: sm_100a"}));
}

}  // namespace
}  // namespace warpforge::dsl
