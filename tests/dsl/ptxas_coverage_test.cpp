// Every DSL wrapper, in every mode it offers, assembled by the real ptxas on
// every target it claims (DESIGN.md: "Every wrapper is checked against ptxas
// in tests, on every target it claims"), and refused with a TargetError on the
// targets it does not claim.
//
// Wrappers are batched into one kernel per family and target (one ptxas call
// each). A family holds wrappers of one availability, so the refusal check on
// the other targets covers each of its gated wrappers.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dsl/dsl_test_support.hpp"

namespace warpforge::dsl {
namespace {

using testing_support::assembles;
using testing_support::ptxas_missing_reason;

struct Family {
  std::string name;
  Availability availability;  // the targets the family's wrappers claim
  std::string instruction;    // what a refusal must name (gated families)
  std::function<void(Kernel&)> build;
};

constexpr Round kFloatRounds[] = {Round::rn, Round::rz, Round::rm, Round::rp};
constexpr Round kIntegerRounds[] = {Round::rni, Round::rzi, Round::rmi, Round::rpi};
const std::vector<Type> kIntegerTypes = {u8, s8, u16, s16, u32, s32, u64, s64};

// ---- families valid on every target -----------------------------------------------

void build_params_and_moves(Kernel& k) {
  for (Type t : {u8, s8, u16, s16, u32, s32, u64, s64, f32, f64, b32, b64})
    k.param(t, "p_" + std::string(ptx::name(t)));
  Reg ptr = k.param_ptr("ptr"), aligned = k.param_ptr("aligned", 16);
  ParamRef desc = k.param_bytes("desc", 128, 64);
  Reg word = k.reg(b32);
  k.ld(Space::param, b32, word, Addr(desc, 4));
  k.st(Space::global, u64, at(aligned), ptr);

  Reg x = k.mov(u32, 7);
  k.mov(x, word);
  Reg f = k.mov(f32, imm_f32(1.5f));
  k.mov(k.reg(f64), imm_f64(-2.25));
  k.mov(k.reg(b32), x);
  k.mov(k.reg(b32), f.as(b32));
  Reg lane = k.mov(u32, SReg::laneid);
  Reg clock = k.mov(b64, SReg::clock64);
  Pred p = k.setp(Cmp::lt, lane, 16), q = k.pred();
  k.mov(q, p);
  k.mov(q, !p);
  k.st(Space::global, u64, at(ptr, 8), clock);
}

void build_integer_arithmetic(Kernel& k) {
  for (Type t : {u16, s16, u32, s32, u64, s64}) {
    Reg d = k.reg(t), a = k.reg(t), b = k.reg(t);
    k.add(d, a, b);
    k.add(d, a, 3);
    k.sub(d, a, b);
    k.mul(d, a, b);
    k.mul_hi(d, a, b);
    k.mad(d, a, b, d);
    k.div(d, a, b);
    k.rem(d, a, 5);
    k.min(d, a, b);
    k.max(d, a, b);
    if (ptx::is_signed(t)) {
      k.abs(d, a);
      k.neg(d, a);
    }
  }
  Reg s = k.reg(s32);
  k.add(s, s, 1, {.sat = true});
  k.sub(s, s, 1, {.sat = true});
  k.mul_wide(k.reg(u32), k.reg(u16), 3);
  k.mul_wide(k.reg(s64), k.reg(s32), k.reg(s32));
  Reg wide = k.reg(u64), narrow = k.reg(u32);
  k.mul_wide(wide, narrow, 4);
  k.mad_wide(wide, narrow, narrow, wide);
}

// The float wrappers of one scalar type in every rounding mode and flag.
void build_float_arithmetic(Kernel& k, Type t) {
  bool f32_only = t == f32;  // .ftz and .sat exist for f32 only (PTX ISA 9.7.3)
  Reg d = k.reg(t), a = k.reg(t), b = k.reg(t);
  for (Round r : kFloatRounds) {
    k.add(d, a, b, {r});
    k.sub(d, a, b, {r});
    k.mul(d, a, b, {r});
    k.fma(d, a, b, d, {r});
    k.div(d, a, b, {r});
    k.rcp(d, a, {r});
    k.sqrt(d, a, {r});
  }
  k.add(d, a, b);
  k.div(d, a, b);  // defaults to .rn
  k.abs(d, a);
  k.neg(d, a);
  k.min(d, a, b);
  k.max(d, a, b);
  if (f32_only) {
    for (FloatMode m : {FloatMode{Round::rn, true, false}, FloatMode{Round::rz, false, true},
                        FloatMode{Round::rm, true, true}}) {
      k.add(d, a, b, m);
      k.mul(d, a, b, m);
      k.fma(d, a, b, d, m);
    }
    k.add(d, a, b, {.ftz = true});
    k.div(d, a, b, {Round::rn, true, false});
    k.abs(d, a, {.ftz = true});
    k.neg(d, a, {.ftz = true});
    k.min(d, a, b, {.ftz = true});
    k.max(d, a, b, {.ftz = true});
    k.rcp(d, a);
    k.rcp(d, a, {.ftz = true});
    k.sqrt(d, a);
    k.sqrt(d, a, {.ftz = true});
    k.ex2_approx(d, a);
    k.ex2_approx(d, a, true);
    k.lg2_approx(d, a);
    k.lg2_approx(d, a, true);
    k.rsqrt_approx(d, a);
    k.rsqrt_approx(d, a, true);
  } else {
    k.rcp(d, a, {.ftz = true});  // rcp.approx.ftz.f64
  }
}

// f16, f16x2 and bf16/bf16x2 arithmetic that sm_80 has (PTX ISA 9.7.4).
void build_half_arithmetic(Kernel& k) {
  for (Type t : {f16, f16x2}) {
    Reg d = k.reg(t), a = k.reg(t), b = k.reg(t);
    k.add(d, a, b);
    k.add(d, a, b, {Round::rn});
    k.sub(d, a, b, {Round::rn, true, true});
    k.mul(d, a, b, {.ftz = true});
    k.fma(d, a, b, d);
    k.fma(d, a, b, d, {Round::rn, true, true});
    k.abs(d, a);
    k.neg(d, a);
    k.min(d, a, b);
    k.max(d, a, b);
  }
  // A 32-bit register split into two 16-bit ones and joined again (mov.b32
  // with a vector operand), and a 64-bit one into two 32-bit ones.
  {
    Reg whole = k.reg(b32), wide = k.reg(b64);
    Regs halves = k.regs(b16, 2), words = k.regs(b32, 2);
    k.unpack(halves, whole);
    k.pack(whole, halves);
    k.unpack(words, wide);
    k.pack(wide, words);
  }
  // mov and selp move half and packed registers as bits.
  Pred p = k.pred();
  for (Type t : {f16, f16x2, bf16, bf16x2}) {
    Reg d = k.reg(t), a = k.reg(t);
    k.mov(d, a);
    k.selp(d, a, d, p);
  }
  for (Type t : {bf16, bf16x2}) {
    Reg d = k.reg(t), a = k.reg(t), b = k.reg(t);
    k.fma(d, a, b, d);
    k.abs(d, a);
    k.neg(d, a);
    k.min(d, a, b);
    k.max(d, a, b);
  }
}

void build_logic_shifts_compares(Kernel& k) {
  for (Type t : {b16, b32, b64, u32, s64}) {
    Reg d = k.reg(t), a = k.reg(t), b = k.reg(t);
    k.and_(d, a, b);
    k.or_(d, a, 0xff);
    k.xor_(d, a, b);
    k.not_(d, a);
    k.shl(d, a, 3);
    k.shr(d, a, k.reg(u32));
  }
  Pred p = k.pred(), q = k.pred();
  k.not_(p, q);

  Reg u = k.reg(u32), s = k.reg(s32), bits = k.reg(b32), f = k.reg(f32), d = k.reg(f64);
  for (Cmp c : {Cmp::eq, Cmp::ne, Cmp::lt, Cmp::le, Cmp::gt, Cmp::ge}) {
    k.setp(p, c, u, 1);
    k.setp(p, c, 2, s);
    k.setp(p, c, bits, bits);
  }
  for (Cmp c : {Cmp::lo, Cmp::ls, Cmp::hi, Cmp::hs}) k.setp(p, c, u, u);
  for (Cmp c : {Cmp::eq, Cmp::ne, Cmp::lt, Cmp::le, Cmp::gt, Cmp::ge, Cmp::equ, Cmp::neu, Cmp::ltu,
                Cmp::leu, Cmp::gtu, Cmp::geu, Cmp::num, Cmp::nan}) {
    k.setp(p, c, f, imm_f32(0.5f));
    k.setp(p, c, d, d);
  }
  k.selp(u, u, 9, p);
  k.selp(f, f, imm_f32(2.0f), q);

  // The integer operators and compound assignments.
  Reg x = u + 1, y = (x - u) * 3;
  y = (y & 0xf) | (x ^ u);
  y = ~(y << 2) >> 1;
  Reg neg = -s, sr = s >> 4;
  y += 1;
  y -= x;
  y *= 2;
  y &= 0xff;
  y |= 1;
  y ^= x;
  y <<= 1;
  y >>= 2;
  Pred all = (x < y) && !(x >= 4u);
  Pred any = (x <= y) || (x > y) || (neg == sr) || (s != 0);
  k.selp(u, y, x, all);
  k.selp(u, 1 + y, 2 * x, any);
}

void build_memory(Kernel& k) {
  Reg g = k.param_ptr("g");
  Reg local = k.reg(u64), sh = k.reg(u32), generic = k.reg(u64), c = k.reg(u64);
  Shared buf = k.shared("buf", 256);
  k.cvta_from(Space::global, generic, g);
  k.cvta_to(Space::shared, local, generic);
  k.cvta_from(Space::shared, generic, local);
  k.cvta_to(Space::local, local, generic);
  k.cvta_from(Space::local, generic, local);
  k.cvta_to(Space::const_, c, generic);
  k.cvta_from(Space::const_, generic, c);
  k.cvta_to(Space::global, g, generic);

  Reg r32 = k.reg(b32), r16 = k.reg(u16), r64 = k.reg(f64), f = k.reg(f32);
  Regs v2 = k.regs(f32, 2), v4 = k.regs(b32, 4), h4 = k.regs(b16, 4), d2 = k.regs(u64, 2);
  for (Space s : {Space::global, Space::shared, Space::local, Space::generic}) {
    Addr a = s == Space::global   ? Addr(g, 16)
             : s == Space::shared ? Addr(sh, 32)
             : s == Space::local  ? Addr(local, 8)
                                  : Addr(generic, 24);
    k.ld(s, b32, r32, a);
    k.ld(s, u8, r16, a);
    k.ld(s, s8, r16, a);
    k.ld(s, f64, r64, a);
    k.ld(s, f32, v2, a);
    k.ld(s, b32, v4, a);
    k.ld(s, b16, h4, a);
    k.ld(s, u64, d2, a);
    k.st(s, b32, a, r32);
    k.st(s, b32, a, 5);
    k.st(s, u8, a, r16);
    k.st(s, f32, a, v2);
    k.st(s, b32, a, v4);
    k.st(s, u64, a, d2);
    if (s != Space::local) {  // .volatile: global, shared and generic only
      k.ld(s, b32, r32, a, {.volatile_ = true});
      k.st(s, f32, a, f, {.volatile_ = true});
    }
  }
  k.prefetch_global_l2(Addr(g, 128));
  k.ld(Space::shared, b32, r32, at(buf, 4));
  k.st(Space::shared, b32, at(buf, 8), r32);
  for (Cache cop : {Cache::ca, Cache::cg, Cache::cs, Cache::lu, Cache::cv}) {
    k.ld(Space::shared, b32, r32, at(sh), {.cache = cop});
    k.ld(Space::local, b32, r32, at(local), {.cache = cop});
    k.ld(Space::const_, b32, r32, at(c), {.cache = cop});
  }
  for (Cache cop : {Cache::wb, Cache::cg, Cache::cs, Cache::wt}) {
    k.st(Space::shared, b32, at(sh), r32, {.cache = cop});
    k.st(Space::local, b32, at(local), r32, {.cache = cop});
  }
  // Half, packed and fp8 values load and store as bits.
  for (Type t : {f16, bf16, e4m3x2, e5m2x2}) {
    Reg h = k.reg(t);
    k.ld(Space::global, t, h, at(g));
    k.st(Space::shared, t, at(sh), h);
  }
  Regs halves = k.regs(f16x2, 4);
  k.ld(Space::global, f16x2, halves, at(g));
  k.st(Space::global, bf16x2, at(g), k.regs(bf16x2, 2));
  k.ld(Space::const_, b32, r32, at(c));
  k.ld(Space::const_, f32, v2, at(c, 8));
  for (Cache cop : {Cache::ca, Cache::cg, Cache::cs, Cache::lu, Cache::cv}) {
    k.ld(Space::global, b32, r32, at(g), {.cache = cop});
    k.ld(Space::global, b32, v4, at(g), {.cache = cop});
  }
  for (Cache cop : {Cache::wb, Cache::cg, Cache::cs, Cache::wt}) {
    k.st(Space::global, b32, at(g), r32, {.cache = cop});
    k.st(Space::global, b32, at(g), v4, {.cache = cop});
  }
  k.ld(Space::global, f32, f, at(g), {.nc = true});
  k.ld(Space::global, b32, v4, at(g, 64), {.nc = true});
  for (Cache cop : {Cache::ca, Cache::cg, Cache::cs})
    k.ld(Space::global, b32, r32, at(g), {.cache = cop, .nc = true});
}

// True where `d` cannot hold every value of `a`, so that cvt.sat has work to do.
bool can_saturate(Type d, Type a) {
  if (d == a) return false;
  return ptx::bits(d) < ptx::bits(a) || (ptx::bits(d) == ptx::bits(a)) ||
         (!ptx::is_signed(d) && ptx::is_signed(a));
}

void build_conversions(Kernel& k) {
  // Every integer pair, plain and saturating.
  for (Type d : kIntegerTypes)
    for (Type a : kIntegerTypes) {
      Reg rd = k.reg(d), ra = k.reg(a);
      k.cvt(rd, ra);
      if (can_saturate(d, a)) k.cvt(rd, ra, {.sat = true});
    }
  // Integers to and from every float type.
  for (Type i : kIntegerTypes)
    for (Type f : {f16, f32, f64}) {
      Reg ri = k.reg(i), rf = k.reg(f);
      k.cvt(rf, ri);
      k.cvt(ri, rf);
      for (Round r : kFloatRounds) k.cvt(rf, ri, {r});
      for (Round r : kIntegerRounds) k.cvt(ri, rf, {r});
    }
  // Float pairs: widening exact, narrowing rounded, same type rounded to an integer.
  for (Type d : {f16, f32, f64})
    for (Type a : {f16, f32, f64}) {
      Reg rd = k.reg(d), ra = k.reg(a);
      if (d == a) {
        for (Round r : kIntegerRounds) k.cvt(rd, ra, {r});
        continue;
      }
      k.cvt(rd, ra);
      if (ptx::bits(d) < ptx::bits(a))
        for (Round r : kFloatRounds) k.cvt(rd, ra, {r});
    }
  Reg f = k.reg(f32), h = k.reg(f16);
  k.cvt(f, f, {Round::rni, true, true});
  k.cvt(h, f, {.round = Round::rn, .sat = true});
  k.cvt(h, f, {.round = Round::rn, .relu = true});
  k.cvt(f, h, {.ftz = true});
  k.cvt(f, k.reg(f64), {Round::rn, true});
  k.cvt(f, k.reg(s32), {Round::rz, true});
  k.cvt(k.reg(u8), f, {Round::rzi, true, true});
  k.cvt(h, k.reg(s32), {Round::rn, false, true});
  // bf16 and tf32 results from f32 (sm_80).
  Reg bf = k.reg(bf16), tf = k.reg(b32);
  k.cvt(bf, f);
  k.cvt(bf, f, {.round = Round::rn, .relu = true});
  k.cvt(bf, f, {Round::rz});
  k.cvt(bf, f, {Round::rn, true});
  k.cvt(tf32, f32, tf, f);  // defaults to .rna
  k.cvt(tf32, f32, tf, f, {Round::rna});
  // Packing two f32 into f16x2 / bf16x2.
  Reg packed = k.reg(b32);
  for (Type t : {f16x2, bf16x2}) {
    k.cvt_pack(t, packed, f, f);
    k.cvt_pack(t, packed, f, imm_f32(1.0f), {Round::rz});
    k.cvt_pack(t, packed, f, f, {.round = Round::rn, .relu = true});
  }
}

void build_barriers_and_fences(Kernel& k) {
  Reg id = k.mov(u32, 3), count = k.mov(u32, 64);
  k.bar_sync();
  k.bar_sync(1);
  k.bar_sync(15, 128);
  k.bar_sync(id, count);
  k.bar_arrive(2, 64);
  k.bar_arrive(id, count);
  k.bar_warp_sync();
  k.bar_warp_sync(k.mov(b32, 0xffff));
  for (MembarLevel l : {MembarLevel::cta, MembarLevel::gl, MembarLevel::sys}) k.membar(l);
  for (FenceSem s : {FenceSem::sc, FenceSem::acq_rel})
    for (Scope sc : {Scope::cta, Scope::gpu, Scope::sys}) k.fence(s, sc);
}

void build_warp_collectives(Kernel& k) {
  Reg d = k.reg(b32), a = k.reg(b32), u = k.reg(u32), s = k.reg(s32);
  Pred p = k.pred();
  for (Shfl m : {Shfl::up, Shfl::down, Shfl::bfly, Shfl::idx}) {
    k.shfl_sync(m, d, a, 1, 0x1f);
    k.shfl_sync(m, d, a, u, 0, 0xffff, p);
  }
  for (Vote v : {Vote::all, Vote::any, Vote::uni}) {
    k.vote_sync(v, p, p);
    k.vote_sync(v, p, !p, u);
  }
  k.ballot_sync(d, p);
  k.ballot_sync(u, !p, 0xff);
  for (Redux r : {Redux::add, Redux::min, Redux::max}) {
    k.redux_sync(r, u, u);
    k.redux_sync(r, s, s, 0xf);
    k.redux_sync(r, d, a);
  }
  for (Redux r : {Redux::and_, Redux::or_, Redux::xor_}) {
    k.redux_sync(r, d, a);
    k.redux_sync(r, u, 7);
  }
  k.activemask(d);
}

void build_atomics(Kernel& k) {
  Reg g = k.param_ptr("g");
  Reg sh = k.reg(u32);
  struct OpType {
    AtomOp op;
    Type type;
  };
  const std::vector<OpType> forms = {
      {AtomOp::add, u32},  {AtomOp::add, s32},   {AtomOp::add, u64},  {AtomOp::add, f32},
      {AtomOp::add, f64},  {AtomOp::add, f16x2}, {AtomOp::min, u32},  {AtomOp::min, s32},
      {AtomOp::min, u64},  {AtomOp::min, s64},   {AtomOp::max, u32},  {AtomOp::max, s32},
      {AtomOp::max, u64},  {AtomOp::max, s64},   {AtomOp::inc, u32},  {AtomOp::dec, u32},
      {AtomOp::exch, b32}, {AtomOp::exch, b64},  {AtomOp::and_, b32}, {AtomOp::and_, b64},
      {AtomOp::or_, b32},  {AtomOp::or_, b64},   {AtomOp::xor_, b32}, {AtomOp::xor_, b64},
  };
  for (Space space : {Space::global, Space::shared}) {
    Addr a = space == Space::global ? Addr(g, 4) : Addr(sh);
    for (const auto& [op, type] : forms) {
      Reg d = k.reg(type), b = k.reg(type);
      k.atom(space, op, type, d, a, b);
      if (op != AtomOp::exch) k.red(space, op, type, a, b);
    }
    for (Type t : {b32, b64}) {
      Reg d = k.reg(t);
      k.atom(space, AtomOp::cas, t, d, a, d, Src(d));
    }
    Reg d = k.reg(u32);
    for (Scope scope : {Scope::cta, Scope::gpu, Scope::sys}) {
      k.atom(space, AtomOp::add, u32, d, a, 1, std::nullopt, {.scope = scope});
      k.atom(space, AtomOp::add, u32, d, a, 1, std::nullopt, {.scope = scope, .relaxed = true});
      k.red(space, AtomOp::add, u32, a, 1, {.scope = scope, .relaxed = true});
    }
  }
}

void build_mma(Kernel& k) {
  for (MmaShape shape : {MmaShape::m16n8k8, MmaShape::m16n8k16}) {
    int ka = shape == MmaShape::m16n8k16 ? 4 : 2, kb = ka / 2;
    Regs a = k.regs(b32, ka), b = k.regs(b32, kb), acc = k.regs(f32, 4), acc16 = k.regs(b32, 2);
    k.mma_sync(shape, f16, f16, f32, acc, a, b, acc);
    k.mma_sync(shape, bf16, bf16, f32, acc, a, b, acc);
    k.mma_sync(shape, f16, f16, f16, acc16, a, b, acc16);
  }
}

void build_ldmatrix(Kernel& k) {
  Reg a32 = k.reg(u32), a64 = k.reg(u64);
  Shared tile = k.shared("tile", 512);
  for (int n : {1, 2, 4})
    for (bool trans : {false, true}) {
      Regs d = k.regs(b32, n);
      k.ldmatrix(d, at(a32), trans);
      k.ldmatrix(d, at(a64, 16), trans);
      k.ldmatrix(d, at(tile, 32), trans);
    }
}

void build_cp_async(Kernel& k) {
  Reg g = k.param_ptr("g");
  Shared buf = k.shared("buf", 256);
  Reg dst = k.address_of(buf);
  k.cp_async(CpAsyncCache::ca, 4, at(dst), at(g));
  k.cp_async(CpAsyncCache::ca, 8, at(dst, 8), at(g, 8));
  k.cp_async(CpAsyncCache::ca, 16, at(buf, 16), at(g, 16));
  k.cp_async(CpAsyncCache::cg, 16, at(dst, 32), at(g, 32));
  k.cp_async(CpAsyncCache::ca, 16, at(dst, 48), at(g, 48), 8);
  k.cp_async(CpAsyncCache::cg, 16, at(dst, 64), at(g, 64), k.mov(u32, 4));
  k.cp_async_commit();
  k.cp_async_wait(1);
  k.cp_async_wait(0);
  k.cp_async_wait_all();
}

void build_bit_manipulation(Kernel& k) {
  Reg d = k.reg(b32), a = k.reg(b32), b = k.reg(u32);
  for (PrmtMode m : {PrmtMode::none, PrmtMode::f4e, PrmtMode::b4e, PrmtMode::rc8, PrmtMode::ecl,
                     PrmtMode::ecr, PrmtMode::rc16}) {
    k.prmt(d, a, b, 0x3210, m);
    k.prmt(d, a, 0, b, m);
  }
  // The generic escape hatch, for a wrapped and an unwrapped opcode.
  k.inst("prmt.b32", d, a, b, 0x1234);
  k.inst("nanosleep.u32", 100);
  k.inst("setp.lt.f16x2", ptx::Operand::pair(k.operand_of(k.pred()), k.operand_of(k.pred())),
         k.reg(f16x2), k.reg(f16x2));
  k.lop3(d, a, b, d, 0x96);
  k.lop3(d, a, 0xff, 1, 0xf0 & 0xcc);
  for (Type t : {u32, s32, u64, s64}) {
    Reg x = k.reg(t);
    k.bfe(x, x, 4, b);
    k.bfi(x, x, x, b, 8);
  }
  for (Type t : {b32, b64, u64}) {
    Reg x = k.reg(t), count = k.reg(u32);
    k.popc(count, x);
    k.clz(count, x);
    k.brev(x, x);
  }
  for (ShfDir dir : {ShfDir::l, ShfDir::r})
    for (ShfMode mode : {ShfMode::clamp, ShfMode::wrap}) {
      k.shf(dir, mode, d, a, d, b);
      k.shf(dir, mode, b, b, a, 7);
    }
  // .pred logic
  Pred p = k.pred(), q = k.pred();
  k.and_(p, p, q);
  k.or_(q, p, q);
  k.xor_(p, q, p);
  // The address of a variable of the module.
  Reg depot = k.reg(u64), smem = k.reg(u32);
  k.mov(depot, Symbol{k.shared("bits_smem", 64).name});
  k.mov(smem, Symbol{"bits_smem"});
  k.st(Space::shared, b32, at(Symbol{"bits_smem"}, 8), d);
}

void build_control_flow(Kernel& k) {
  Reg n = k.param(u32, "n");
  Reg tid = k.sreg(SReg::tid_x);
  Pred small = tid < 8;
  Label skip = k.label("skip"), uni = k.label();
  k.bra_if(small, skip);
  k.bra_if(!small, skip, {.uniform = true});
  k.bra(uni, {.uniform = true});
  k.place(uni);
  k.place(skip);
  Reg acc = k.mov(u32, 0);
  k.if_then(small, [&] { acc += 1; });
  k.if_else(
      !small, [&] { acc += 2; }, [&] { acc -= 1; });
  k.for_range(0, n, 2, [&](Reg i) { acc += i; });
  k.for_range(tid, 64, k.mov(u32, 32), [&](Reg i) { acc ^= i; });
  k.while_loop([&] { return acc > 100; }, [&] { acc >>= 1; });
  k.guarded(small, [&] { acc *= 3; });
  k.guarded(!small, [&] { k.exit(); });
  k.ret();
}

void build_special_registers(Kernel& k) {
  Reg sink32 = k.mov(u32, 0);
  Reg sink64 = k.mov(u64, 0);
  for (const SRegInfo& info : ptx::all_sregs()) {
    if (!info.availability.has(Target::sm_80)) continue;  // the cluster ones are their own family
    Reg by_enum = k.sreg(info.reg), by_name = k.sreg(info.name);
    Reg& sink = info.type == u64 ? sink64 : sink32;
    sink += by_enum;
    sink += by_name;
  }
}

void build_directives_maxntid(Kernel& k) {
  k.maxntid(256);
  k.minnctapersm(2);
  k.maxnreg(128);
  k.mov(u32, SReg::tid_x);
}

void build_directives_reqntid(Kernel& k) {
  k.reqntid(32, 4, 2);
  k.mov(u32, SReg::tid_y);
}

void build_shared_memory(Kernel& k) {
  Shared a = k.shared("a", 1024, 128), b = k.shared("b", 4);
  Shared dyn = k.dynamic_shared();
  Shared same = k.dynamic_shared();  // asking again returns the one array
  Reg pa = k.address_of(a), pdyn = k.address_of(dyn);
  Reg v = k.reg(b32);
  k.ld(Space::shared, b32, v, at(same, 4));
  k.st(Space::shared, b32, at(b), v);
  k.st(Space::shared, b32, at(pa, 8), v);
  k.st(Space::shared, b32, at(pdyn), v);
}

// ---- gated families ----------------------------------------------------------------

void build_fp8_conversions(Kernel& k) {
  Reg f = k.reg(f32), packed = k.reg(b16), halves = k.reg(b32);
  for (Type t : {e4m3x2, e5m2x2}) {
    k.cvt_pack(t, packed, f, f);
    k.cvt_pack(t, packed, f, imm_f32(-1.0f), {.round = Round::rn, .relu = true});
    k.cvt_unpack_fp8(t, halves, packed);
  }
}

// .satfinite on f16/bf16/tf32 results needs PTX 8.1, which warpforge emits from sm_89 on.
void build_satfinite_conversions(Kernel& k) {
  Reg f = k.reg(f32);
  k.cvt(k.reg(f16), f, {.round = Round::rn, .satfinite = true});
  k.cvt(k.reg(bf16), f, {.round = Round::rn, .satfinite = true, .relu = true});
  k.cvt(tf32, f32, k.reg(b32), f, {.round = Round::rna, .satfinite = true});
  k.cvt_pack(f16x2, k.reg(b32), f, f, {.round = Round::rn, .satfinite = true});
  k.cvt_pack(bf16x2, k.reg(b32), f, f, {.round = Round::rz, .satfinite = true, .relu = true});
}

void build_fp8_mma(Kernel& k) {
  Regs a = k.regs(b32, 4), b = k.regs(b32, 2), acc = k.regs(f32, 4);
  for (Type ta : {e4m3, e5m2})
    for (Type tb : {e4m3, e5m2}) k.mma_sync(MmaShape::m16n8k32, ta, tb, f32, acc, a, b, acc);
}

void build_bf16_source_conversions(Kernel& k) {
  Reg bf = k.reg(bf16);
  k.cvt(k.reg(f32), bf);
  k.cvt(k.reg(f64), bf);
  k.cvt(k.reg(s32), bf);
  k.cvt(k.reg(u16), bf, {Round::rni});
  // bf16 results from sources other than f32, and tf32 with .rn/.rz.
  k.cvt(bf, k.reg(f16));
  k.cvt(k.reg(f16), bf);
  k.cvt(bf, k.reg(f64), {Round::rz});
  k.cvt(bf, k.reg(s32));
  k.cvt(tf32, f32, k.reg(b32), k.reg(f32), {Round::rn});
  k.cvt(tf32, f32, k.reg(b32), k.reg(f32), {Round::rz});
}

void build_bf16_add_sub_mul(Kernel& k) {
  for (Type t : {bf16, bf16x2}) {
    Reg d = k.reg(t), a = k.reg(t), b = k.reg(t);
    k.add(d, a, b);
    k.sub(d, a, b, {Round::rn});
    k.mul(d, a, b, {Round::rn});
  }
}

void build_stmatrix(Kernel& k) {
  Reg a = k.reg(u32);
  for (int n : {1, 2, 4})
    for (bool trans : {false, true}) k.stmatrix(at(a, 16 * n), k.regs(b32, n), trans);
}

void build_elect(Kernel& k) {
  Pred leader = k.pred();
  k.elect_sync(k.reg(b32), leader);
  k.elect_sync(k.reg(u32), leader, 0xf);
}

void build_cluster_fence(Kernel& k) {
  k.fence(FenceSem::sc, Scope::cluster);
  k.fence(FenceSem::acq_rel, Scope::cluster);
}

void build_grid_dependency(Kernel& k) {
  k.griddepcontrol_launch_dependents();
  k.griddepcontrol_wait();
}

void build_cluster_atomics(Kernel& k) {
  Reg g = k.param_ptr("g");
  Reg d = k.reg(u32);
  k.atom(Space::global, AtomOp::add, u32, d, at(g), 1, std::nullopt, {.scope = Scope::cluster});
  k.atom(Space::shared, AtomOp::max, u32, d, at(d), 1, std::nullopt,
         {.scope = Scope::cluster, .relaxed = true});
  k.red(Space::global, AtomOp::or_, b32, at(g), d, {.scope = Scope::cluster});
}

void build_bf16x2_atomics(Kernel& k) {
  Reg g = k.param_ptr("g");
  Reg d = k.reg(bf16x2);
  k.atom(Space::global, AtomOp::add, bf16x2, d, at(g), d);
  k.red(Space::global, AtomOp::add, bf16x2, at(g, 4), d);
}

void build_cluster_special_registers(Kernel& k) {
  Reg sink = k.mov(u32, 0);
  for (const SRegInfo& info : ptx::all_sregs()) {
    if (info.availability.has(Target::sm_80)) continue;
    if (info.type == pred) {  // %is_explicit_cluster: into a predicate
      k.inst("mov.pred", k.pred(), info.reg);
      continue;
    }
    sink += k.sreg(info.reg);
    sink += k.sreg(info.name.substr(1));  // the name without '%' works too
  }
}

void build_cluster_directives(Kernel& k) {
  k.explicitcluster();
  k.reqnctapercluster(2, 1, 1);
  k.mov(u32, SReg::tid_x);
}

void build_reqnctapercluster_alone(Kernel& k) {
  k.reqnctapercluster(4);
}

void build_mbarrier_basic(Kernel& k) {
  Shared bar = k.shared("bar", 8, 8);
  k.mbarrier_init(at(bar), 32);
  k.mbarrier_arrive(at(bar));
  Reg addr = k.address_of(bar);
  k.mbarrier_init(at(addr), k.mov(u32, 1));
}

void build_mbarrier_transactions(Kernel& k) {
  Shared bar = k.shared("bar", 8, 8);
  k.mbarrier_arrive_expect_tx(at(bar), 4096);
  Pred ready = k.pred();
  k.mbarrier_try_wait_parity(ready, at(bar), 0);
  k.mbarrier_wait_parity(at(bar), k.mov(u32, 1));
  k.fence_mbarrier_init();
  Reg remote = k.reg(u32);
  k.mapa_shared(remote, k.address_of(bar), 1);
  k.mbarrier_arrive_cluster(remote);
  k.mbarrier_arrive_cluster(remote, Scope::cta);
}

void build_tensor_copy(Kernel& k) {
  ParamRef map_param = k.param_bytes("map", 128, 64);
  Reg map = k.param_generic_address(map_param);
  Shared tile = k.shared("tile", 8192, 1024), bar = k.shared("bar", 8, 8);
  Reg x = k.mov(s32, 64), y = k.mov(u32, 3);
  k.prefetch_tensormap(map);
  k.tma_load(at(tile), map, {x, y}, at(bar));
  k.tma_load(at(tile), map, {x, y, 0}, at(bar));
  k.tma_load(at(tile), map, {x, 0}, at(bar), k.mov(u16, 3));
  k.fence_proxy_async_shared();
  k.tma_store(map, {x, y}, at(tile));
  k.tma_reduce_add(map, {x, y, 0}, at(tile));
  Reg sums = k.param_ptr("sums");
  k.bulk_reduce_add_f32(at(sums), at(tile), 4096);
  k.bulk_reduce_add_f32(at(sums, 256), at(tile), k.mov(u32, 64));
  k.bulk_commit_group();
  k.bulk_wait_group_read(0);
  k.bulk_wait_group(1);
}

void build_cluster_ops(Kernel& k) {
  Shared s = k.shared("s", 64);
  Reg remote = k.reg(u32);
  k.mapa_shared(remote, k.address_of(s), 1);
  k.mapa_shared(remote, k.address_of(s), k.sreg(SReg::cluster_ctarank));
  k.st(Space::shared, u32, at(remote), 7u, {.cluster = true});
  k.st(Space::shared, b32, at(remote, 16), k.regs(b32, 4), {.cluster = true});
  Shared bar = k.shared("bar", 8, 8);
  Reg remote_bar = k.reg(u32);
  k.mapa_shared(remote_bar, k.address_of(bar), 1);
  k.bulk_copy_to_cluster(at(remote), at(s), 64, at(remote_bar));
  k.bulk_copy_to_cluster(at(remote), at(s), k.mov(u32, 32), at(remote_bar));
  k.fence_proxy_async_shared_cluster();
  k.barrier_cluster_arrive();
  k.barrier_cluster_wait();
  k.barrier_cluster_arrive(false);
  k.barrier_cluster_wait(false);
}

void build_wgmma(Kernel& k) {
  k.wgmma_fence();
  Reg da = k.mov(b64, 0), db = k.mov(b64, 0);
  Pred accumulate = k.setp(Cmp::ne, k.mov(u32, SReg::tid_x), 0);
  Regs a = k.regs(b32, 4);
  for (int n : {8, 64, 128, 256}) {
    Regs d = k.regs(f32, n / 2);
    for (Type t : {bf16, f16}) {
      k.wgmma_mma_async(t, d, da, db, false, WgmmaMajor::k, WgmmaMajor::k);
      k.wgmma_mma_async(t, d, da, db, accumulate, WgmmaMajor::mn, WgmmaMajor::mn);
      k.wgmma_mma_async(t, d, da, db, !accumulate, WgmmaMajor::k, WgmmaMajor::mn);
      k.wgmma_mma_async(t, t, d, a, db, accumulate, WgmmaMajor::k);
      k.wgmma_mma_async(t, t, d, a, db, false, WgmmaMajor::mn);
    }
    // Any 32-bit non-float handle is a .b32 register, which is all ptxas takes for A.
    k.wgmma_mma_async(bf16, bf16, d, k.regs(bf16x2, 4), db, true, WgmmaMajor::k);
    k.wgmma_mma_async(e4m3, e5m2, d, k.regs(u32, 4), db, true, WgmmaMajor::k);
    for (Type ta : {e4m3, e5m2})
      for (Type tb : {e4m3, e5m2}) {
        k.wgmma_mma_async(ta, tb, d, da, db, accumulate, WgmmaMajor::k, WgmmaMajor::k);
        k.wgmma_mma_async(ta, tb, d, a, db, true, WgmmaMajor::k);
      }
  }
  k.wgmma_commit_group();
  k.wgmma_wait_group(0);
  k.wgmma_wait_group(1);
  k.setmaxnreg_dec(40);
  k.setmaxnreg_inc(232);
}

// Every tcgen05 wrapper in one cta_group (a kernel may not mix the two).
void build_tcgen05(Kernel& k, CtaGroup g) {
  Shared slot = k.shared("tmem_slot", 16), bar = k.shared("tmem_bar", 8, 8);
  k.tcgen05_alloc(g, at(slot), 32);
  k.tcgen05_alloc(g, at(slot), k.mov(u32, 512));
  k.tcgen05_relinquish_alloc_permit(g);
  Reg taddr = k.reg(b32), a_tmem = k.reg(u32), sfa = k.reg(b32), sfb = k.reg(b32);
  Reg adesc = k.reg(b64), bdesc = k.reg(u64), idesc = k.reg(b32);
  Pred accumulate = k.pred();
  for (Tcgen05Kind kind : {Tcgen05Kind::f16, Tcgen05Kind::tf32, Tcgen05Kind::f8f6f4}) {
    k.tcgen05_mma(g, kind, taddr, adesc, bdesc, idesc, false);
    k.tcgen05_mma(g, kind, taddr, adesc, bdesc, idesc, accumulate);
    k.tcgen05_mma_a_tmem(g, kind, taddr, a_tmem, bdesc, idesc, !accumulate);
  }
  for (auto [kind, vec] : {std::pair{Tcgen05Kind::mxf8f6f4, ScaleVec::x1}, std::pair{Tcgen05Kind::mxf4, ScaleVec::x2},
                           std::pair{Tcgen05Kind::mxf4nvf4, ScaleVec::x2},
                           std::pair{Tcgen05Kind::mxf4nvf4, ScaleVec::x4}}) {
    k.tcgen05_mma_block_scale(g, kind, vec, taddr, adesc, bdesc, idesc, sfa, sfb, accumulate);
    k.tcgen05_mma_block_scale_a_tmem(g, kind, vec, taddr, a_tmem, bdesc, idesc, sfa, sfb, true);
  }
  for (TmemCopyShape shape :
       {TmemCopyShape::rows128_bits256, TmemCopyShape::rows4_bits256, TmemCopyShape::rows128_bits128,
        TmemCopyShape::rows64_bits128_warpx2_02_13, TmemCopyShape::rows64_bits128_warpx2_01_23,
        TmemCopyShape::rows32_bits128_warpx4})
    k.tcgen05_cp(g, shape, taddr, adesc);
  k.tcgen05_shift_down(g, taddr);
  for (auto [shape, per_repeat, max_num] :
       {std::tuple{TmemShape::lanes32_bits32, 1, 128}, std::tuple{TmemShape::lanes16_bits64, 1, 128},
        std::tuple{TmemShape::lanes16_bits128, 2, 64}, std::tuple{TmemShape::lanes16_bits256, 4, 32}})
    for (int num : {1, 2, max_num}) {
      Regs data = k.regs(f32, per_repeat * num);
      k.tcgen05_ld(shape, data, taddr);
      k.tcgen05_st(shape, taddr, data);
    }
  k.tcgen05_ld(TmemShape::lanes32_bits32, k.regs(u32, 4), taddr);
  for (int num : {1, 2, 128}) {
    Regs data = k.regs(b32, num);
    k.tcgen05_ld_16x32bx2(data, taddr, 16);
    k.tcgen05_st_16x32bx2(taddr, 64, data);
  }
  k.tcgen05_ld(TmemShape::lanes16_bits256, k.regs(b32, 4), taddr, TmemPacking::pack_16b);
  k.tcgen05_st(TmemShape::lanes32_bits32, taddr, k.regs(b32, 2), TmemPacking::pack_16b);
  k.tcgen05_ld_16x32bx2(k.regs(b32, 2), taddr, 8, TmemPacking::pack_16b);
  k.tcgen05_st_16x32bx2(taddr, 8, k.regs(b32, 2), TmemPacking::pack_16b);
  for (Tcgen05Kind kind : {Tcgen05Kind::f16, Tcgen05Kind::tf32, Tcgen05Kind::f8f6f4})
    k.tcgen05_mma_sp(g, kind, taddr, adesc, bdesc, sfa, idesc, accumulate);
  // The weight-stationary MMA has .cta_group::1 only.
  if (g == CtaGroup::one) {
    for (Tcgen05Kind kind : {Tcgen05Kind::f16, Tcgen05Kind::tf32, Tcgen05Kind::f8f6f4})
      k.tcgen05_mma_ws(kind, taddr, adesc, bdesc, idesc, accumulate);
    for (CollectorUsage usage : {CollectorUsage::fill, CollectorUsage::use, CollectorUsage::lastuse,
                                 CollectorUsage::discard})
      k.tcgen05_mma_ws(Tcgen05Kind::f16, taddr, adesc, bdesc, idesc, true, Collector{3, usage});
  }
  k.tcgen05_wait_ld();
  k.tcgen05_wait_st();
  Reg bar_addr = k.address_of(bar);
  k.tcgen05_commit(g, bar_addr);
  k.tcgen05_commit_multicast(g, bar_addr, k.mov(u16, 3));
  k.tcgen05_fence_before_thread_sync();
  k.tcgen05_fence_after_thread_sync();
  k.tcgen05_dealloc(g, taddr, 32);
}

const std::vector<Family>& families() {
  const auto all = Availability::since(0);
  const auto ada = Availability::since(89), hopper = Availability::since(90);
  const auto blackwell = Availability::arch_specific(100, 103);
  static const std::vector<Family> kFamilies = {
      {"params_and_moves", all, "", build_params_and_moves},
      {"integer_arithmetic", all, "", build_integer_arithmetic},
      {"f32_arithmetic", all, "", [](Kernel& k) { build_float_arithmetic(k, f32); }},
      {"f64_arithmetic", all, "", [](Kernel& k) { build_float_arithmetic(k, f64); }},
      {"half_arithmetic", all, "", build_half_arithmetic},
      {"logic_shifts_compares", all, "", build_logic_shifts_compares},
      {"memory", all, "", build_memory},
      {"conversions", all, "", build_conversions},
      {"barriers_and_fences", all, "", build_barriers_and_fences},
      {"warp_collectives", all, "", build_warp_collectives},
      {"atomics", all, "", build_atomics},
      {"mma_f16_bf16", all, "", build_mma},
      {"ldmatrix", all, "", build_ldmatrix},
      {"cp_async", all, "", build_cp_async},
      {"bit_manipulation", all, "", build_bit_manipulation},
      {"control_flow", all, "", build_control_flow},
      {"special_registers", all, "", build_special_registers},
      {"directives_maxntid", all, "", build_directives_maxntid},
      {"directives_reqntid", all, "", build_directives_reqntid},
      {"shared_memory", all, "", build_shared_memory},
      {"fp8_conversions", ada, "cvt.rn.satfinite.e4m3x2.f32", build_fp8_conversions},
      {"satfinite_conversions", ada, "cvt.rn.satfinite.f16.f32", build_satfinite_conversions},
      {"fp8_mma", ada, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", build_fp8_mma},
      {"bf16_source_conversions", hopper, "cvt.f32.bf16", build_bf16_source_conversions},
      {"bf16_add_sub_mul", hopper, "add.bf16", build_bf16_add_sub_mul},
      {"stmatrix", hopper, "stmatrix.sync.aligned.m8n8.x1.shared.b16", build_stmatrix},
      {"elect_sync", hopper, "elect.sync", build_elect},
      {"cluster_fence", hopper, "fence.sc.cluster", build_cluster_fence},
      {"grid_dependency", hopper, "griddepcontrol.launch_dependents", build_grid_dependency},
      {"cluster_atomics", hopper, "atom.cluster", build_cluster_atomics},
      {"bf16x2_atomics", hopper, "atom.global.add.noftz.bf16x2", build_bf16x2_atomics},
      {"cluster_special_registers", hopper, "%clusterid.x", build_cluster_special_registers},
      {"cluster_directives", hopper, ".explicitcluster", build_cluster_directives},
      {"reqnctapercluster", hopper, ".reqnctapercluster", build_reqnctapercluster_alone},
      {"mbarrier_basic", all, "", build_mbarrier_basic},
      {"mbarrier_transactions", hopper, "mbarrier.arrive.expect_tx.shared::cta.b64", build_mbarrier_transactions},
      {"tensor_copy", hopper, "cvta.param.u64", build_tensor_copy},
      {"cluster_ops", hopper, "mapa.shared::cluster.u32", build_cluster_ops},
      {"wgmma", Availability::arch_specific(90, 90), "wgmma.fence.sync.aligned", build_wgmma},
      {"tcgen05_cta_group_1", blackwell, "tcgen05.alloc", [](Kernel& k) { build_tcgen05(k, CtaGroup::one); }},
      {"tcgen05_cta_group_2", blackwell, "tcgen05.alloc", [](Kernel& k) { build_tcgen05(k, CtaGroup::two); }},
  };
  return kFamilies;
}

class WrapperFamily : public ::testing::TestWithParam<std::tuple<std::size_t, Target>> {
 protected:
  const Family& family() const { return families()[std::get<0>(GetParam())]; }
  Target target() const { return std::get<1>(GetParam()); }
};

TEST_P(WrapperFamily, AssemblesWhereClaimedAndIsRefusedElsewhere) {
  const Family& f = family();
  Kernel k("cover_" + f.name, target());
  if (!f.availability.has(target())) {
    ASSERT_FALSE(f.instruction.empty()) << "an ungated family must claim every target";
    EXPECT_TRUE(testing_support::throws_with<TargetError>(
        [&] { f.build(k); }, {"kernel 'cover_" + f.name + "'", f.instruction,
                              "not available on " + std::string(ptx::name(target())),
                              "targets that have it: " + f.availability.targets()}));
    return;
  }
  f.build(k);
  ptx::Module m = k.module();
  EXPECT_EQ(m.target, std::vector<std::string>{std::string(ptx::name(target()))});
  if (auto reason = ptxas_missing_reason(); !reason.empty()) GTEST_SKIP() << reason;
  EXPECT_TRUE(assembles(m));
}

std::string case_name(const ::testing::TestParamInfo<WrapperFamily::ParamType>& info) {
  return families()[std::get<0>(info.param)].name + "_" +
         std::string(ptx::name(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(AllTargets, WrapperFamily,
                         ::testing::Combine(::testing::Range<std::size_t>(0, families().size()),
                                            ::testing::ValuesIn(ptx::all_targets())),
                         case_name);

// ---- every gated call, one at a time --------------------------------------------
// A family stops at its first refused call; this table checks each gated call
// by itself on every target that lacks it.

struct GatedCall {
  std::string instruction;  // what the refusal names
  Availability availability;
  std::function<void(Kernel&)> call;
};

std::vector<GatedCall> gated_calls() {
  const auto ada = Availability::since(89), hopper = Availability::since(90);
  std::vector<GatedCall> calls;
  for (Type t : {e4m3x2, e5m2x2}) {
    std::string type(ptx::name(t));
    calls.push_back({"cvt.rn.satfinite." + type + ".f32", ada,
                     [t](Kernel& k) { k.cvt_pack(t, k.reg(b16), k.reg(f32), k.reg(f32)); }});
    calls.push_back({"cvt.rn.f16x2." + type, ada,
                     [t](Kernel& k) { k.cvt_unpack_fp8(t, k.reg(b32), k.reg(b16)); }});
  }
  for (Type t : {f16, bf16})
    calls.push_back({"cvt.rn.satfinite." + std::string(ptx::name(t)) + ".f32", ada, [t](Kernel& k) {
                       k.cvt(k.reg(t), k.reg(f32), {.round = Round::rn, .satfinite = true});
                     }});
  for (Type t : {f16x2, bf16x2})
    calls.push_back({"cvt.rn.satfinite." + std::string(ptx::name(t)) + ".f32", ada, [t](Kernel& k) {
                       k.cvt_pack(t, k.reg(b32), k.reg(f32), k.reg(f32),
                                  {.round = Round::rn, .satfinite = true});
                     }});
  for (Type ta : {e4m3, e5m2})
    for (Type tb : {e4m3, e5m2})
      calls.push_back({"mma.sync.aligned.m16n8k32.row.col.f32." + std::string(ptx::name(ta)) + "." +
                           std::string(ptx::name(tb)) + ".f32",
                       ada, [ta, tb](Kernel& k) {
                         k.mma_sync(MmaShape::m16n8k32, ta, tb, f32, k.regs(f32, 4), k.regs(b32, 4),
                                    k.regs(b32, 2), k.regs(f32, 4));
                       }});
  for (Type d : {f16, f32, f64, s32, u64})
    calls.push_back({"cvt", hopper, [d](Kernel& k) { k.cvt(k.reg(d), k.reg(bf16)); }});
  for (Type a : {f16, f64, s16, u32})
    calls.push_back({".bf16." + std::string(ptx::name(a)), hopper,
                     [a](Kernel& k) { k.cvt(k.reg(bf16), k.reg(a)); }});
  for (Round r : {Round::rn, Round::rz})
    calls.push_back({"cvt." + std::string(name(r)) + ".tf32.f32", hopper,
                     [r](Kernel& k) { k.cvt(tf32, f32, k.reg(b32), k.reg(f32), {r}); }});
  for (Type t : {bf16, bf16x2})
    for (const char* op : {"add", "sub", "mul"})
      calls.push_back({std::string(op) + "." + std::string(ptx::name(t)), hopper,
                       [t, op = std::string(op)](Kernel& k) {
                         Reg r = k.reg(t);
                         if (op == "add") k.add(r, r, r);
                         if (op == "sub") k.sub(r, r, r);
                         if (op == "mul") k.mul(r, r, r);
                       }});
  for (int n : {1, 2, 4})
    for (bool trans : {false, true})
      calls.push_back(
          {"stmatrix.sync.aligned.m8n8.x" + std::to_string(n) + (trans ? ".trans" : "") +
               ".shared.b16",
           hopper, [n, trans](Kernel& k) { k.stmatrix(at(k.reg(u32)), k.regs(b32, n), trans); }});
  calls.push_back({"elect.sync", hopper, [](Kernel& k) { k.elect_sync(k.reg(b32), k.pred()); }});
  calls.push_back(
      {"fence.sc.cluster", hopper, [](Kernel& k) { k.fence(FenceSem::sc, Scope::cluster); }});
  calls.push_back({"fence.acq_rel.cluster", hopper,
                   [](Kernel& k) { k.fence(FenceSem::acq_rel, Scope::cluster); }});
  calls.push_back({"atom.cluster", hopper, [](Kernel& k) {
                     k.atom(Space::shared, AtomOp::add, u32, k.reg(u32), at(k.reg(u32)), 1,
                            std::nullopt, {.scope = Scope::cluster});
                   }});
  calls.push_back({"red.relaxed.cluster", hopper, [](Kernel& k) {
                     k.red(Space::global, AtomOp::add, u32, at(k.reg(u64)), 1,
                           {.scope = Scope::cluster, .relaxed = true});
                   }});
  calls.push_back({"atom.global.add.noftz.bf16x2", hopper, [](Kernel& k) {
                     Reg r = k.reg(bf16x2);
                     k.atom(Space::global, AtomOp::add, bf16x2, r, at(k.reg(u64)), r);
                   }});
  calls.push_back({"red.shared.add.noftz.bf16x2", hopper, [](Kernel& k) {
                     k.red(Space::shared, AtomOp::add, bf16x2, at(k.reg(u32)), k.reg(bf16x2));
                   }});
  for (const SRegInfo& info : ptx::all_sregs())
    if (!info.availability.has(Target::sm_80))
      // inst() refuses the operand, a wrapper the instruction
      calls.push_back({(info.type == pred ? "" : "mov ") + std::string(info.name),
                       info.availability, [r = info.reg, predicate = info.type == pred](Kernel& k) {
                         if (predicate)  // %is_explicit_cluster
                           k.inst("mov.pred", k.pred(), r);
                         else
                           k.sreg(r);
                       }});
  calls.push_back({".explicitcluster", hopper, [](Kernel& k) { k.explicitcluster(); }});
  calls.push_back({".reqnctapercluster", hopper, [](Kernel& k) { k.reqnctapercluster(2); }});
  const auto blackwell = Availability::arch_specific(100, 103);
  const CtaGroup g = CtaGroup::one;
  calls.push_back({"tcgen05.alloc", blackwell, [g](Kernel& k) { k.tcgen05_alloc(g, at(k.reg(u32)), 64); }});
  calls.push_back({"tcgen05.dealloc", blackwell, [g](Kernel& k) { k.tcgen05_dealloc(g, k.reg(b32), 64); }});
  calls.push_back({"tcgen05.relinquish_alloc_permit", blackwell,
                   [g](Kernel& k) { k.tcgen05_relinquish_alloc_permit(g); }});
  calls.push_back({"tcgen05.mma", blackwell, [g](Kernel& k) {
                     k.tcgen05_mma(g, Tcgen05Kind::f16, k.reg(b32), k.reg(b64), k.reg(b64), k.reg(b32), true);
                   }});
  calls.push_back({"tcgen05.mma", blackwell, [g](Kernel& k) {
                     k.tcgen05_mma_a_tmem(g, Tcgen05Kind::tf32, k.reg(b32), k.reg(b32), k.reg(b64), k.reg(b32),
                                          true);
                   }});
  calls.push_back({"tcgen05.mma", blackwell, [g](Kernel& k) {
                     k.tcgen05_mma_block_scale(g, Tcgen05Kind::mxf4, ScaleVec::x2, k.reg(b32), k.reg(b64),
                                               k.reg(b64), k.reg(b32), k.reg(b32), k.reg(b32), true);
                   }});
  calls.push_back({"tcgen05.mma", blackwell, [g](Kernel& k) {
                     k.tcgen05_mma_block_scale_a_tmem(g, Tcgen05Kind::mxf8f6f4, ScaleVec::x1, k.reg(b32),
                                                      k.reg(b32), k.reg(b64), k.reg(b32), k.reg(b32), k.reg(b32),
                                                      true);
                   }});
  calls.push_back({"tcgen05.cp", blackwell, [g](Kernel& k) {
                     k.tcgen05_cp(g, TmemCopyShape::rows32_bits128_warpx4, k.reg(b32), k.reg(b64));
                   }});
  calls.push_back({"tcgen05.shift", blackwell, [g](Kernel& k) { k.tcgen05_shift_down(g, k.reg(b32)); }});
  calls.push_back({"tcgen05.ld.sync.aligned.16x256b", blackwell, [](Kernel& k) {
                     k.tcgen05_ld(TmemShape::lanes16_bits256, k.regs(b32, 4), k.reg(b32));
                   }});
  calls.push_back({"tcgen05.st.sync.aligned.32x32b", blackwell, [](Kernel& k) {
                     k.tcgen05_st(TmemShape::lanes32_bits32, k.reg(b32), k.regs(b32, 1));
                   }});
  calls.push_back({"tcgen05.ld.sync.aligned.16x32bx2", blackwell, [](Kernel& k) {
                     k.tcgen05_ld_16x32bx2(k.regs(b32, 2), k.reg(b32), 16, TmemPacking::pack_16b);
                   }});
  calls.push_back({"tcgen05.st.sync.aligned.16x32bx2", blackwell,
                   [](Kernel& k) { k.tcgen05_st_16x32bx2(k.reg(b32), 16, k.regs(b32, 1)); }});
  calls.push_back({"tcgen05.mma.ws", blackwell, [](Kernel& k) {
                     k.tcgen05_mma_ws(Tcgen05Kind::f16, k.reg(b32), k.reg(b64), k.reg(b64),
                                      k.reg(b32), true);
                   }});
  calls.push_back({"tcgen05.mma.sp", blackwell, [g](Kernel& k) {
                     k.tcgen05_mma_sp(g, Tcgen05Kind::f16, k.reg(b32), k.reg(b64), k.reg(b64),
                                      k.reg(b32), k.reg(b32), true);
                   }});
  calls.push_back({"tcgen05.wait::ld.sync.aligned", blackwell, [](Kernel& k) { k.tcgen05_wait_ld(); }});
  calls.push_back({"tcgen05.wait::st.sync.aligned", blackwell, [](Kernel& k) { k.tcgen05_wait_st(); }});
  calls.push_back({"tcgen05.commit", blackwell, [g](Kernel& k) { k.tcgen05_commit(g, k.reg(u32)); }});
  calls.push_back({"tcgen05.commit", blackwell,
                   [g](Kernel& k) { k.tcgen05_commit_multicast(g, k.reg(u32), k.reg(u16)); }});
  calls.push_back({"tcgen05.fence::before_thread_sync", blackwell,
                   [](Kernel& k) { k.tcgen05_fence_before_thread_sync(); }});
  calls.push_back({"tcgen05.fence::after_thread_sync", blackwell,
                   [](Kernel& k) { k.tcgen05_fence_after_thread_sync(); }});
  return calls;
}

TEST(GatedCalls, EachIsRefusedOnEveryTargetThatLacksIt) {
  int refusals = 0;
  for (const GatedCall& g : gated_calls())
    for (Target t : ptx::all_targets()) {
      if (g.availability.has(t)) continue;
      Kernel k("gated", t);
      EXPECT_TRUE(testing_support::throws_with<TargetError>(
          [&] { g.call(k); },
          {"kernel 'gated'", g.instruction, "not available on " + std::string(ptx::name(t)),
           "targets that have it: " + g.availability.targets()}))
          << g.instruction << " on " << ptx::name(t);
      ++refusals;
    }
  EXPECT_GT(refusals, 60);
}

TEST(GatedCalls, EachBuildsOnEveryTargetThatHasIt) {
  // The assembling is done by the families above; here each call must at least build.
  for (const GatedCall& g : gated_calls())
    for (Target t : ptx::all_targets()) {
      if (!g.availability.has(t)) continue;
      Kernel k("gated", t);
      EXPECT_NO_THROW(g.call(k)) << g.instruction << " on " << ptx::name(t);
      EXPECT_NE(k.ptx(), Kernel("gated", t).ptx()) << g.instruction << ": the call emitted nothing";
    }
}

}  // namespace
}  // namespace warpforge::dsl
