// Integer and float arithmetic, comparison and selection (PTX ISA 9.7.1-9.7.7).
// Every wrapper takes its destination first and reads the instruction type
// from it; sources are checked against that type.
#pragma once

#include "warpforge/dsl/kernel_core.hpp"
#include "warpforge/ptx/modifiers.hpp"

namespace warpforge::dsl {

// Rounding modifiers (PTX ISA 9.7.3 float, 9.7.9.21 cvt integer rounding).
enum class Round { none, rn, rz, rm, rp, rna, rni, rzi, rmi, rpi };
std::string_view name(Round r);  // "" for none
ptx::Mod mod(Round r);           // the modifier word (not for none)

struct FloatMode {
  Round round = Round::none;
  bool ftz = false;  // flush subnormals to zero
  bool sat = false;  // clamp to [0, 1]
};

using ptx::Cmp;  // setp's comparisons, ptx/modifiers.hpp

class AluOps : public virtual KernelCore {
 public:
  void mov(const Reg& d, const Src& s);
  Reg mov(Type t, const Src& s);
  Reg mov(Type t, SReg s) { return mov_sreg(t, s); }
  // mov.T d, %sreg into a given register, T being d's type (of the special register's width).
  void mov(const Reg& d, SReg s);
  void mov(const Pred& d, const PredUse& s);
  // mov.T d, var: the address of a variable of the module; T a 32- or 64-bit
  // integer or bit type (PTX ISA 9.7.9.1 mov).
  void mov(const Reg& d, const Symbol& var);

  // Integers: add/sub (optionally .sat for s32), mul -> mul.lo; floats take a FloatMode.
  void add(const Reg& d, const Src& a, const Src& b, FloatMode m = {});
  void sub(const Reg& d, const Src& a, const Src& b, FloatMode m = {});
  void mul(const Reg& d, const Src& a, const Src& b, FloatMode m = {});
  void mul_hi(const Reg& d, const Src& a, const Src& b);
  void mul_wide(const Reg& d, const Reg& a, const Src& b);  // d twice a's width
  void mad(const Reg& d, const Src& a, const Src& b, const Src& c);  // integer mad.lo
  void mad_wide(const Reg& d, const Reg& a, const Src& b, const Src& c);
  void fma(const Reg& d, const Src& a, const Src& b, const Src& c, FloatMode m = {Round::rn});
  void div(const Reg& d, const Src& a, const Src& b, FloatMode m = {});  // float: .rn by default
  void rem(const Reg& d, const Src& a, const Src& b);
  void abs(const Reg& d, const Src& a, FloatMode m = {});
  void neg(const Reg& d, const Src& a, FloatMode m = {});
  void min(const Reg& d, const Src& a, const Src& b, FloatMode m = {});
  void max(const Reg& d, const Src& a, const Src& b, FloatMode m = {});
  // Float special functions; rcp/sqrt are exact with a rounding mode, approximate without.
  void rcp(const Reg& d, const Src& a, FloatMode m = {});
  void sqrt(const Reg& d, const Src& a, FloatMode m = {});
  void ex2_approx(const Reg& d, const Src& a, bool ftz = false);
  void lg2_approx(const Reg& d, const Src& a, bool ftz = false);
  void rsqrt_approx(const Reg& d, const Src& a, bool ftz = false);  // PTX ISA 9.7.3.18, f32

  // mov.bN with a vector operand (PTX ISA 9.7.9.1 mov): `whole` split into
  // `parts` of equal width, lowest part first, or joined from them.
  void unpack(const Regs& parts, const Reg& whole);
  void pack(const Reg& whole, const Regs& parts);

  // Logic and shifts (and, or, xor, not are C++ keywords: trailing underscore).
  void and_(const Reg& d, const Src& a, const Src& b);
  void or_(const Reg& d, const Src& a, const Src& b);
  void xor_(const Reg& d, const Src& a, const Src& b);
  void not_(const Reg& d, const Src& a);
  void not_(const Pred& d, const Pred& a);
  // and/or/xor.pred d, a, b (PTX ISA 9.7.8.1-3: plain predicates, no negation).
  void and_(const Pred& d, const Pred& a, const Pred& b);
  void or_(const Pred& d, const Pred& a, const Pred& b);
  void xor_(const Pred& d, const Pred& a, const Pred& b);
  void shl(const Reg& d, const Src& a, const Src& amount);
  void shr(const Reg& d, const Src& a, const Src& amount);

  // setp.cmp.type p, a, b: the type comes from the register among a, b.
  void setp(const Pred& p, Cmp c, const Src& a, const Src& b);
  Pred setp(Cmp c, const Src& a, const Src& b);
  void selp(const Reg& d, const Src& a, const Src& b, const PredUse& p);

  // Value-returning forms, where naming a destination first is clumsy
  // (`Reg q = k.div(a, b)`): the same one instruction into a fresh register of
  // the type of the first register among the sources (refused when every
  // source is an integer literal, which says no type).
  Reg div(const Src& a, const Src& b, FloatMode m = {});
  Reg min(const Src& a, const Src& b, FloatMode m = {});
  Reg max(const Src& a, const Src& b, FloatMode m = {});
  Reg selp(const Src& a, const Src& b, const PredUse& p);

 private:
  Reg mov_sreg(Type t, SReg s);
  // The destination of a value-returning form: a register of the sources' type.
  Reg result_of(const char* op, const Src& a, const Src& b);
  void arith(ptx::Opcode op, const Reg& d, std::initializer_list<const Src*> srcs, FloatMode m);
  void float_only(ptx::Opcode op, const Reg& d, std::initializer_list<const Src*> srcs,
                  FloatMode m);
  void int_only(ptx::Instruction form, const Reg& d, std::initializer_list<const Src*> srcs,
                Type t);
  void approx(ptx::Opcode op, const Reg& d, const Src& a, bool ftz);  // op.approx[.ftz].type d, a
  void approx_f32(ptx::Opcode op, const Reg& d, const Src& a, bool ftz);  // f32 only, else refused
  // The mov.bN form of a pack or unpack, refused unless parts split whole evenly.
  ptx::Instruction split_form(const Regs& parts, const Reg& whole);
};

}  // namespace warpforge::dsl
