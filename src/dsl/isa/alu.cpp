#include "warpforge/dsl/isa/alu.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::arith_type;
using detail::bits_type;
using detail::M;
using detail::mod;
using detail::O;
using detail::type_name;

ptx::Mod mod(Round r) {
  static constexpr M kMods[] = {M::rn,  M::rn,  M::rz,  M::rm,  M::rp,
                                M::rna, M::rni, M::rzi, M::rmi, M::rpi};
  return kMods[static_cast<int>(r)];
}

std::string_view name(Round r) {
  return r == Round::none ? "" : ptx::name(mod(r));
}

namespace {
// op[.rnd][.ftz][.sat].type
ptx::Instruction float_form(O op, FloatMode m, Type t) {
  ptx::Instruction form{op};
  if (m.round != Round::none) form.modifiers.push_back(mod(m.round));
  if (m.ftz) form.modifiers.push_back(M::ftz);
  if (m.sat) form.modifiers.push_back(M::sat);
  form.modifiers.push_back(mod(t));
  return form;
}
}  // namespace

namespace {
// mov and selp have no half or packed float types (PTX ISA 9.7.9.1 mov,
// 9.7.7.3 selp: .b16/.b32/.b64, integers, .f32, .f64): those registers move
// as the bit type of their width.
Type move_type(Type t) {
  return ptx::is_float(t) && t != Type::f32 && t != Type::f64 ? bits_type(t) : t;
}
}  // namespace

void AluOps::mov(const Reg& d, const Src& s) {
  const ptx::Instruction form{O::mov, {mod(move_type(d.type()))}};
  expect_type(form, s, d.type(), "source");
  emit(form, {operand_of(d), operand_of(s)});
}

Reg AluOps::mov(Type t, const Src& s) {
  Reg d = reg(t);
  mov(d, s);
  return d;
}

Reg AluOps::mov_sreg(Type t, SReg s) {
  if (ptx::bits(t) != ptx::bits(info(s).type))
    fail("mov " + std::string(info(s).name), "special register is " + type_name(info(s).type) +
                                                 "; cannot read it as " + type_name(t));
  return sreg(s).as(t);
}

void AluOps::mov(const Reg& d, SReg s) {
  const ptx::Instruction form{O::mov, {mod(d.type())}};
  if (ptx::bits(d.type()) != ptx::bits(info(s).type))
    fail(form.full_opcode() + " " + std::string(info(s).name),
         "special register is " + type_name(info(s).type) + "; " + d.name() + " is " +
             type_name(d.type()));
  emit(form, {operand_of(d), operand_of(s)});
}

void AluOps::mov(const Pred& d, const PredUse& s) {
  emit({O::mov, {mod(Type::pred)}}, {operand_of(d), operand_of(s)});
}

void AluOps::mov(const Reg& d, const Symbol& var) {
  const ptx::Instruction form{O::mov, {mod(d.type())}};
  const Type t = d.type();
  if (!ptx::is_integer(t) || (ptx::bits(t) != 32 && ptx::bits(t) != 64))
    fail(form.full_opcode() + " " + var.name,
         "the address of a variable moves into a 32- or 64-bit integer or bit register; " +
             d.name() + " is " + type_name(t));
  emit(form, {operand_of(d), ptx::Operand::symbol(var.name)});
}

void AluOps::arith(O op, const Reg& d, std::initializer_list<const Src*> srcs, FloatMode m) {
  Type t = d.type();
  ptx::Instruction form{op};
  const std::string base(ptx::name(op));
  if (ptx::is_float(t)) {
    form = float_form(op, m, t);
    // PTX ISA 9.7.3: the f64 forms take no .ftz or .sat. 9.7.4: the half forms
    // round with .rn only, and add/sub/mul on bf16/bf16x2 need sm_90.
    if (t == Type::f64 && (m.ftz || m.sat)) fail(form, ".ftz and .sat apply to f32 and the half types, not f64");
    bool half = t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2;
    if (half && m.round != Round::none && m.round != Round::rn)
      fail(form, "rounding ." + std::string(dsl::name(m.round)) + " on " + type_name(t) + "; the half types take .rn only");
    bool bf = t == Type::bf16 || t == Type::bf16x2;
    if (bf && (op == O::add || op == O::sub || op == O::mul)) require(form, Availability::since(90));
    // bf16 arithmetic has no .ftz or .sat (PTX ISA 9.7.4.4 fma, 9.7.4.6-9 neg/abs/min/max).
    if (bf && (m.ftz || m.sat)) fail(form, ".ftz and .sat do not apply to " + type_name(t));
    // Only the rounding instructions round: abs, neg, min and max take no mode (PTX ISA 9.7.3.x).
    bool rounds = op == O::add || op == O::sub || op == O::mul || op == O::fma || op == O::div ||
                  op == O::rcp || op == O::sqrt;
    if (!rounds && m.round != Round::none) fail(form, base + " takes no rounding mode");
    // div, rcp and sqrt exist for f32 and f64 only (PTX ISA 9.7.3.8/13/15).
    if ((op == O::div || op == O::rcp || op == O::sqrt) && t != Type::f32 && t != Type::f64)
      fail(form, d.name() + " is " + type_name(t) + "; " + base + " takes f32 or f64");
  } else {
    const ptx::Instruction plain{op, {mod(t)}};
    if (m.round != Round::none || m.ftz)
      fail(plain, "rounding and .ftz apply to float types; " + d.name() + " is " + type_name(t));
    if (ptx::bits(t) < 16)
      fail(plain, d.name() + " is " + type_name(t) +
                      "; integer arithmetic is 16, 32 or 64 bits wide (cvt 8-bit values first)");
    if (op == O::mul) form.modifiers.push_back(M::lo);
    if (m.sat) {
      // PTX ISA 9.7.1.1/9.7.1.2: only add.sat.s32 and sub.sat.s32 saturate.
      if (t != Type::s32 || (op != O::add && op != O::sub))
        fail(plain, ".sat on integers is add.sat.s32 and sub.sat.s32 only (PTX ISA 9.7.1.1)");
      form.modifiers.push_back(M::sat);
    }
    form.modifiers.push_back(mod(arith_type(t)));
  }
  std::vector<ptx::Operand> ops{operand_of(d)};
  char role[] = "source a";
  for (const Src* s : srcs) {
    expect_type(form, *s, t, role);
    ops.push_back(operand_of(*s));
    ++role[7];
  }
  emit(std::move(form), std::move(ops));
}

void AluOps::float_only(O op, const Reg& d, std::initializer_list<const Src*> srcs, FloatMode m) {
  if (!ptx::is_float(d.type()))
    fail(ptx::Instruction{op, {mod(d.type())}},
         d.name() + " is " + type_name(d.type()) + "; " + std::string(ptx::name(op)) + " takes float types");
  arith(op, d, srcs, m);
}

void AluOps::int_only(ptx::Instruction form, const Reg& d, std::initializer_list<const Src*> srcs, Type t) {
  if (!ptx::is_integer(d.type()))
    fail(form, d.name() + " is " + type_name(d.type()) + "; this instruction takes integer types");
  std::vector<ptx::Operand> ops{operand_of(d)};
  char role[] = "source a";
  for (const Src* s : srcs) {
    expect_type(form, *s, t, role);
    ops.push_back(operand_of(*s));
    ++role[7];
  }
  emit(std::move(form), std::move(ops));
}

void AluOps::add(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith(O::add, d, {&a, &b}, m); }
void AluOps::sub(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith(O::sub, d, {&a, &b}, m); }
void AluOps::mul(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith(O::mul, d, {&a, &b}, m); }

void AluOps::mul_hi(const Reg& d, const Src& a, const Src& b) {
  int_only({O::mul, {M::hi, mod(arith_type(d.type()))}}, d, {&a, &b}, d.type());
}

void AluOps::mul_wide(const Reg& d, const Reg& a, const Src& b) {
  Type t = arith_type(a.type());
  const ptx::Instruction form{O::mul, {M::wide, mod(t)}};
  if (ptx::bits(t) != 16 && ptx::bits(t) != 32) fail(form, "mul.wide takes 16- or 32-bit sources; " + a.name() + " is " + type_name(t));
  if (ptx::bits(d.type()) != 2 * ptx::bits(t) || !ptx::is_integer(d.type()))
    fail(form, "destination " + d.name() + " is " + type_name(d.type()) + "; expected a " +
                   std::to_string(2 * ptx::bits(t)) + "-bit integer");
  expect_type(form, b, t, "source b");
  emit(form, {operand_of(d), operand_of(a), operand_of(b)});
}

void AluOps::mad(const Reg& d, const Src& a, const Src& b, const Src& c) {
  int_only({O::mad, {M::lo, mod(arith_type(d.type()))}}, d, {&a, &b, &c}, d.type());
}

void AluOps::mad_wide(const Reg& d, const Reg& a, const Src& b, const Src& c) {
  Type t = arith_type(a.type());
  const ptx::Instruction form{O::mad, {M::wide, mod(t)}};
  if (ptx::bits(d.type()) != 2 * ptx::bits(t) || !ptx::is_integer(d.type()))
    fail(form, "destination " + d.name() + " is " + type_name(d.type()) + "; expected a " +
                   std::to_string(2 * ptx::bits(t)) + "-bit integer");
  expect_type(form, b, t, "source b");
  expect_type(form, c, d.type(), "source c");
  emit(form, {operand_of(d), operand_of(a), operand_of(b), operand_of(c)});
}

void AluOps::fma(const Reg& d, const Src& a, const Src& b, const Src& c, FloatMode m) {
  if (m.round == Round::none)
    fail(ptx::Instruction{O::fma, {mod(d.type())}}, "fma needs a rounding mode (rn, rz, rm, rp)");
  float_only(O::fma, d, {&a, &b, &c}, m);
}

void AluOps::div(const Reg& d, const Src& a, const Src& b, FloatMode m) {
  if (ptx::is_float(d.type())) {
    // PTX ISA 9.7.3.8: div.f32 needs .approx, .full or a rounding mode; pick IEEE .rn by default.
    if (m.round == Round::none) m.round = Round::rn;
    return float_only(O::div, d, {&a, &b}, m);
  }
  int_only({O::div, {mod(arith_type(d.type()))}}, d, {&a, &b}, d.type());
}

void AluOps::rem(const Reg& d, const Src& a, const Src& b) {
  int_only({O::rem, {mod(arith_type(d.type()))}}, d, {&a, &b}, d.type());
}

void AluOps::abs(const Reg& d, const Src& a, FloatMode m) {
  if (!ptx::is_float(d.type()) && !ptx::is_signed(d.type()))
    fail(ptx::Instruction{O::abs, {mod(d.type())}},
         d.name() + " is " + type_name(d.type()) + "; abs takes signed or float types");
  arith(O::abs, d, {&a}, m);
}

void AluOps::neg(const Reg& d, const Src& a, FloatMode m) {
  if (!ptx::is_float(d.type()) && !ptx::is_signed(d.type()))
    fail(ptx::Instruction{O::neg, {mod(d.type())}},
         d.name() + " is " + type_name(d.type()) + "; neg takes signed or float types");
  arith(O::neg, d, {&a}, m);
}

void AluOps::min(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith(O::min, d, {&a, &b}, m); }
void AluOps::max(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith(O::max, d, {&a, &b}, m); }

void AluOps::rcp(const Reg& d, const Src& a, FloatMode m) {
  if (d.type() != Type::f32 && d.type() != Type::f64)
    fail(ptx::Instruction{O::rcp, {mod(d.type())}},
         d.name() + " is " + type_name(d.type()) + "; rcp takes f32 or f64");
  // PTX ISA 9.7.3.13: the f64 approximation exists only as rcp.approx.ftz.f64.
  if (m.round == Round::none && d.type() == Type::f64 && !m.ftz)
    fail(ptx::Instruction{O::rcp, {M::approx, mod(Type::f64)}},
         "the f64 approximation is rcp.approx.ftz.f64: set .ftz, or give a rounding mode");
  if (m.round == Round::none) return approx(O::rcp, d, a, m.ftz);
  float_only(O::rcp, d, {&a}, m);
}

void AluOps::sqrt(const Reg& d, const Src& a, FloatMode m) {
  // PTX ISA 9.7.3.15: sqrt.approx is f32 only; f64 needs a rounding mode.
  if (m.round == Round::none && d.type() != Type::f32)
    fail(ptx::Instruction{O::sqrt, {M::approx, mod(d.type())}},
         "the approximation is f32 only; give " + d.name() + " a rounding mode");
  if (m.round == Round::none) return approx(O::sqrt, d, a, m.ftz);
  float_only(O::sqrt, d, {&a}, m);
}

void AluOps::approx(O op, const Reg& d, const Src& a, bool ftz) {
  ptx::Instruction form{op, {M::approx}};
  if (ftz) form.modifiers.push_back(M::ftz);
  form.modifiers.push_back(mod(d.type()));
  expect_type(form, a, d.type(), "source a");
  emit(std::move(form), {operand_of(d), operand_of(a)});
}

// PTX ISA 9.7.3.18-20: the f32 forms are the ones every target has.
void AluOps::approx_f32(O op, const Reg& d, const Src& a, bool ftz) {
  if (d.type() != Type::f32)
    fail(ptx::Instruction{op, {M::approx, mod(d.type())}},
         d.name() + " is " + type_name(d.type()) + "; " + std::string(ptx::name(op)) + ".approx takes f32");
  approx(op, d, a, ftz);
}

void AluOps::ex2_approx(const Reg& d, const Src& a, bool ftz) { approx_f32(O::ex2, d, a, ftz); }
void AluOps::lg2_approx(const Reg& d, const Src& a, bool ftz) { approx_f32(O::lg2, d, a, ftz); }
void AluOps::rsqrt_approx(const Reg& d, const Src& a, bool ftz) { approx_f32(O::rsqrt, d, a, ftz); }

ptx::Instruction AluOps::split_form(const Regs& parts, const Reg& whole) {
  ptx::Instruction form{O::mov, {mod(bits_type(whole.type()))}};
  const int width = ptx::bits(whole.type());
  if (parts.size() < 2 || width % static_cast<int>(parts.size()) != 0)
    fail(form, std::to_string(parts.size()) + " parts of " + whole.name() + " (" + type_name(whole.type()) +
                   "); a vector mov takes 2 or 4 parts that divide its width");
  for (const Reg& p : parts)
    if (ptx::bits(p.type()) * static_cast<int>(parts.size()) != width)
      fail(form, p.name() + " is " + type_name(p.type()) + "; each of " + std::to_string(parts.size()) +
                     " parts of a " + std::to_string(width) + "-bit register is " +
                     std::to_string(width / static_cast<int>(parts.size())) + " bits");
  return form;
}

void AluOps::unpack(const Regs& parts, const Reg& whole) {
  emit(split_form(parts, whole), {operand_of(parts), operand_of(whole)});
}

void AluOps::pack(const Reg& whole, const Regs& parts) {
  emit(split_form(parts, whole), {operand_of(whole), operand_of(parts)});
}

void AluOps::and_(const Reg& d, const Src& a, const Src& b) { int_only({O::and_, {mod(bits_type(d.type()))}}, d, {&a, &b}, d.type()); }
void AluOps::or_(const Reg& d, const Src& a, const Src& b) { int_only({O::or_, {mod(bits_type(d.type()))}}, d, {&a, &b}, d.type()); }
void AluOps::xor_(const Reg& d, const Src& a, const Src& b) { int_only({O::xor_, {mod(bits_type(d.type()))}}, d, {&a, &b}, d.type()); }
void AluOps::not_(const Reg& d, const Src& a) { int_only({O::not_, {mod(bits_type(d.type()))}}, d, {&a}, d.type()); }
void AluOps::not_(const Pred& d, const Pred& a) {
  emit({O::not_, {mod(Type::pred)}}, {operand_of(d), operand_of(a)});
}
void AluOps::and_(const Pred& d, const Pred& a, const Pred& b) {
  emit({O::and_, {mod(Type::pred)}}, {operand_of(d), operand_of(a), operand_of(b)});
}
void AluOps::or_(const Pred& d, const Pred& a, const Pred& b) {
  emit({O::or_, {mod(Type::pred)}}, {operand_of(d), operand_of(a), operand_of(b)});
}
void AluOps::xor_(const Pred& d, const Pred& a, const Pred& b) {
  emit({O::xor_, {mod(Type::pred)}}, {operand_of(d), operand_of(a), operand_of(b)});
}

void AluOps::shl(const Reg& d, const Src& a, const Src& amount) {
  const ptx::Instruction form{O::shl, {mod(bits_type(d.type()))}};
  if (!ptx::is_integer(d.type())) fail(form, d.name() + " is " + type_name(d.type()) + "; shifts take integer types");
  expect_type(form, a, d.type(), "source a");
  expect_type(form, amount, Type::u32, "shift amount");
  emit(form, {operand_of(d), operand_of(a), operand_of(amount)});
}

void AluOps::shr(const Reg& d, const Src& a, const Src& amount) {
  const ptx::Instruction form{O::shr, {mod(ptx::is_signed(d.type()) ? d.type() : arith_type(d.type()))}};
  if (!ptx::is_integer(d.type())) fail(form, d.name() + " is " + type_name(d.type()) + "; shifts take integer types");
  expect_type(form, a, d.type(), "source a");
  expect_type(form, amount, Type::u32, "shift amount");
  emit(form, {operand_of(d), operand_of(a), operand_of(amount)});
}

void AluOps::setp(const Pred& p, Cmp c, const Src& a, const Src& b) {
  const Src& typed = a.is_reg() ? a : b;
  const M cmp = mod(c);
  if (!typed.is_reg())
    fail(ptx::Instruction{O::setp, {cmp}}, "both operands are immediates; one must be a register");
  Type t = typed.reg().type();
  if (ptx::is_bits(t)) t = (c == Cmp::eq || c == Cmp::ne) ? t : arith_type(t);
  const ptx::Instruction opcode{O::setp, {cmp, mod(t)}};
  // PTX ISA 9.7.4.10: a packed compare writes a predicate pair (p|q), which this form has no room for.
  if (t == Type::f16x2 || t == Type::bf16x2)
    fail(opcode, "a packed " + type_name(t) + " compare writes two predicates (p|q); write it with inst()");
  // PTX ISA 9.7.7.1 (integer) / 9.7.7.2 (float): lo/ls/hi/hs compare unsigned
  // integers; equ ... nan are the unordered float comparisons.
  bool unsigned_only = c == Cmp::lo || c == Cmp::ls || c == Cmp::hi || c == Cmp::hs;
  bool float_only_cmp = ptx::float_only(c);
  if (unsigned_only && !ptx::is_unsigned(t))
    fail(opcode, "." + std::string(ptx::name(c)) +
                     " compares unsigned integers; the operands are " + type_name(t));
  if (float_only_cmp && !ptx::is_float(t))
    fail(opcode, "." + std::string(ptx::name(c)) + " is a float comparison; the operands are " +
                     type_name(t));
  expect_type(opcode, a, t, "source a");
  expect_type(opcode, b, t, "source b");
  emit(opcode, {operand_of(p), operand_of(a), operand_of(b)});
}

Pred AluOps::setp(Cmp c, const Src& a, const Src& b) {
  Pred p = pred();
  setp(p, c, a, b);
  return p;
}

void AluOps::selp(const Reg& d, const Src& a, const Src& b, const PredUse& p) {
  const ptx::Instruction opcode{O::selp, {mod(move_type(d.type()))}};
  if (p.negated) fail(opcode, "the selector must be a plain predicate (swap a and b instead of negating)");
  expect_type(opcode, a, d.type(), "source a");
  expect_type(opcode, b, d.type(), "source b");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(b), operand_of(p)});
}

Reg AluOps::result_of(const char* op, const Src& a, const Src& b) {
  for (const Src* s : {&a, &b}) {
    if (s->is_reg()) return reg(s->reg().type());
    if (s->imm_type()) return reg(*s->imm_type());
  }
  fail(op,
       "both sources are integer literals, which say no type: make one a register, or name the "
       "destination (" +
           std::string(op) + "(d, a, b))");
}

Reg AluOps::div(const Src& a, const Src& b, FloatMode m) {
  Reg d = result_of("div", a, b);
  div(d, a, b, m);
  return d;
}

Reg AluOps::min(const Src& a, const Src& b, FloatMode m) {
  Reg d = result_of("min", a, b);
  min(d, a, b, m);
  return d;
}

Reg AluOps::max(const Src& a, const Src& b, FloatMode m) {
  Reg d = result_of("max", a, b);
  max(d, a, b, m);
  return d;
}

Reg AluOps::selp(const Src& a, const Src& b, const PredUse& p) {
  Reg d = result_of("selp", a, b);
  selp(d, a, b, p);
  return d;
}

}  // namespace warpforge::dsl
