#include "warpforge/dsl/isa/alu.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::arith_type;
using detail::bits_type;
using detail::dot;
using detail::type_name;

std::string_view name(Round r) {
  switch (r) {
    case Round::none: return "";
    case Round::rn: return "rn";
    case Round::rz: return "rz";
    case Round::rm: return "rm";
    case Round::rp: return "rp";
    case Round::rna: return "rna";
    case Round::rni: return "rni";
    case Round::rzi: return "rzi";
    case Round::rmi: return "rmi";
    case Round::rpi: return "rpi";
  }
  return "";
}

namespace {
std::string float_modifiers(FloatMode m) {
  std::string out;
  if (m.round != Round::none) out += "." + std::string(name(m.round));
  if (m.ftz) out += ".ftz";
  if (m.sat) out += ".sat";
  return out;
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
  std::string opcode = "mov" + dot(move_type(d.type()));
  expect_type(opcode, s, d.type(), "source");
  emit(opcode, {operand_of(d), operand_of(s)});
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
  std::string opcode = "mov" + dot(d.type());
  if (ptx::bits(d.type()) != ptx::bits(info(s).type))
    fail(opcode + " " + std::string(info(s).name), "special register is " + type_name(info(s).type) +
                                                       "; " + d.name() + " is " + type_name(d.type()));
  emit(opcode, {operand_of(d), operand_of(s)});
}

void AluOps::mov(const Pred& d, const PredUse& s) {
  emit("mov.pred", {operand_of(d), operand_of(s)});
}

void AluOps::mov(const Reg& d, const Symbol& var) {
  std::string opcode = "mov" + dot(d.type());
  const Type t = d.type();
  if (!ptx::is_integer(t) || (ptx::bits(t) != 32 && ptx::bits(t) != 64))
    fail(opcode + " " + var.name,
         "the address of a variable moves into a 32- or 64-bit integer or bit register; " +
             d.name() + " is " + type_name(t));
  emit(opcode, {operand_of(d), ptx::Operand::symbol(var.name)});
}

void AluOps::arith(const char* op, const Reg& d, std::initializer_list<const Src*> srcs, FloatMode m) {
  Type t = d.type();
  std::string opcode;
  if (ptx::is_float(t)) {
    opcode = op + float_modifiers(m) + dot(t);
    // PTX ISA 9.7.3: the f64 forms take no .ftz or .sat. 9.7.4: the half forms
    // round with .rn only, and add/sub/mul on bf16/bf16x2 need sm_90.
    if (t == Type::f64 && (m.ftz || m.sat)) fail(opcode, ".ftz and .sat apply to f32 and the half types, not f64");
    bool half = t == Type::f16 || t == Type::f16x2 || t == Type::bf16 || t == Type::bf16x2;
    if (half && m.round != Round::none && m.round != Round::rn)
      fail(opcode, "rounding ." + std::string(dsl::name(m.round)) + " on " + type_name(t) + "; the half types take .rn only");
    bool bf = t == Type::bf16 || t == Type::bf16x2;
    std::string base(op);
    if (bf && (base == "add" || base == "sub" || base == "mul")) require(opcode, Availability::since(90));
    // bf16 arithmetic has no .ftz or .sat (PTX ISA 9.7.4.4 fma, 9.7.4.6-9 neg/abs/min/max).
    if (bf && (m.ftz || m.sat)) fail(opcode, ".ftz and .sat do not apply to " + type_name(t));
    // Only the rounding instructions round: abs, neg, min and max take no mode (PTX ISA 9.7.3.x).
    bool rounds = base == "add" || base == "sub" || base == "mul" || base == "fma" || base == "div" ||
                  base == "rcp" || base == "sqrt";
    if (!rounds && m.round != Round::none) fail(opcode, base + " takes no rounding mode");
    // div, rcp and sqrt exist for f32 and f64 only (PTX ISA 9.7.3.8/13/15).
    if ((base == "div" || base == "rcp" || base == "sqrt") && t != Type::f32 && t != Type::f64)
      fail(opcode, d.name() + " is " + type_name(t) + "; " + base + " takes f32 or f64");
  } else {
    if (m.round != Round::none || m.ftz)
      fail(std::string(op) + dot(t), "rounding and .ftz apply to float types; " + d.name() + " is " + type_name(t));
    if (ptx::bits(t) < 16)
      fail(std::string(op) + dot(t), d.name() + " is " + type_name(t) +
                                         "; integer arithmetic is 16, 32 or 64 bits wide (cvt 8-bit values first)");
    std::string mods = std::string(op) == "mul" ? ".lo" : "";
    if (m.sat) {
      // PTX ISA 9.7.1.1/9.7.1.2: only add.sat.s32 and sub.sat.s32 saturate.
      if (t != Type::s32 || (std::string(op) != "add" && std::string(op) != "sub"))
        fail(std::string(op) + dot(t), ".sat on integers is add.sat.s32 and sub.sat.s32 only (PTX ISA 9.7.1.1)");
      mods += ".sat";
    }
    opcode = op + mods + dot(arith_type(t));
  }
  std::vector<ptx::Operand> ops{operand_of(d)};
  char role[] = "source a";
  for (const Src* s : srcs) {
    expect_type(opcode, *s, t, role);
    ops.push_back(operand_of(*s));
    ++role[7];
  }
  emit(opcode, std::move(ops));
}

void AluOps::float_only(const char* op, const Reg& d, std::initializer_list<const Src*> srcs, FloatMode m) {
  if (!ptx::is_float(d.type()))
    fail(std::string(op) + dot(d.type()), d.name() + " is " + type_name(d.type()) + "; " + op + " takes float types");
  arith(op, d, srcs, m);
}

void AluOps::int_only(const std::string& opcode, const Reg& d, std::initializer_list<const Src*> srcs, Type t) {
  if (!ptx::is_integer(d.type()))
    fail(opcode, d.name() + " is " + type_name(d.type()) + "; this instruction takes integer types");
  std::vector<ptx::Operand> ops{operand_of(d)};
  char role[] = "source a";
  for (const Src* s : srcs) {
    expect_type(opcode, *s, t, role);
    ops.push_back(operand_of(*s));
    ++role[7];
  }
  emit(opcode, std::move(ops));
}

void AluOps::add(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith("add", d, {&a, &b}, m); }
void AluOps::sub(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith("sub", d, {&a, &b}, m); }
void AluOps::mul(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith("mul", d, {&a, &b}, m); }

void AluOps::mul_hi(const Reg& d, const Src& a, const Src& b) {
  int_only("mul.hi" + dot(arith_type(d.type())), d, {&a, &b}, d.type());
}

void AluOps::mul_wide(const Reg& d, const Reg& a, const Src& b) {
  Type t = arith_type(a.type());
  std::string opcode = "mul.wide" + dot(t);
  if (ptx::bits(t) != 16 && ptx::bits(t) != 32) fail(opcode, "mul.wide takes 16- or 32-bit sources; " + a.name() + " is " + type_name(t));
  if (ptx::bits(d.type()) != 2 * ptx::bits(t) || !ptx::is_integer(d.type()))
    fail(opcode, "destination " + d.name() + " is " + type_name(d.type()) + "; expected a " +
                     std::to_string(2 * ptx::bits(t)) + "-bit integer");
  expect_type(opcode, b, t, "source b");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(b)});
}

void AluOps::mad(const Reg& d, const Src& a, const Src& b, const Src& c) {
  int_only("mad.lo" + dot(arith_type(d.type())), d, {&a, &b, &c}, d.type());
}

void AluOps::mad_wide(const Reg& d, const Reg& a, const Src& b, const Src& c) {
  Type t = arith_type(a.type());
  std::string opcode = "mad.wide" + dot(t);
  if (ptx::bits(d.type()) != 2 * ptx::bits(t) || !ptx::is_integer(d.type()))
    fail(opcode, "destination " + d.name() + " is " + type_name(d.type()) + "; expected a " +
                     std::to_string(2 * ptx::bits(t)) + "-bit integer");
  expect_type(opcode, b, t, "source b");
  expect_type(opcode, c, d.type(), "source c");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(b), operand_of(c)});
}

void AluOps::fma(const Reg& d, const Src& a, const Src& b, const Src& c, FloatMode m) {
  if (m.round == Round::none) fail("fma" + dot(d.type()), "fma needs a rounding mode (rn, rz, rm, rp)");
  float_only("fma", d, {&a, &b, &c}, m);
}

void AluOps::div(const Reg& d, const Src& a, const Src& b, FloatMode m) {
  if (ptx::is_float(d.type())) {
    // PTX ISA 9.7.3.8: div.f32 needs .approx, .full or a rounding mode; pick IEEE .rn by default.
    if (m.round == Round::none) m.round = Round::rn;
    return float_only("div", d, {&a, &b}, m);
  }
  int_only("div" + dot(arith_type(d.type())), d, {&a, &b}, d.type());
}

void AluOps::rem(const Reg& d, const Src& a, const Src& b) {
  int_only("rem" + dot(arith_type(d.type())), d, {&a, &b}, d.type());
}

void AluOps::abs(const Reg& d, const Src& a, FloatMode m) {
  if (!ptx::is_float(d.type()) && !ptx::is_signed(d.type()))
    fail("abs" + dot(d.type()), d.name() + " is " + type_name(d.type()) + "; abs takes signed or float types");
  arith("abs", d, {&a}, m);
}

void AluOps::neg(const Reg& d, const Src& a, FloatMode m) {
  if (!ptx::is_float(d.type()) && !ptx::is_signed(d.type()))
    fail("neg" + dot(d.type()), d.name() + " is " + type_name(d.type()) + "; neg takes signed or float types");
  arith("neg", d, {&a}, m);
}

void AluOps::min(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith("min", d, {&a, &b}, m); }
void AluOps::max(const Reg& d, const Src& a, const Src& b, FloatMode m) { arith("max", d, {&a, &b}, m); }

void AluOps::rcp(const Reg& d, const Src& a, FloatMode m) {
  if (d.type() != Type::f32 && d.type() != Type::f64)
    fail("rcp" + dot(d.type()), d.name() + " is " + type_name(d.type()) + "; rcp takes f32 or f64");
  // PTX ISA 9.7.3.13: the f64 approximation exists only as rcp.approx.ftz.f64.
  if (m.round == Round::none && d.type() == Type::f64 && !m.ftz)
    fail("rcp.approx.f64", "the f64 approximation is rcp.approx.ftz.f64: set .ftz, or give a rounding mode");
  if (m.round == Round::none) return approx("rcp", d, a, m.ftz);
  float_only("rcp", d, {&a}, m);
}

void AluOps::sqrt(const Reg& d, const Src& a, FloatMode m) {
  // PTX ISA 9.7.3.15: sqrt.approx is f32 only; f64 needs a rounding mode.
  if (m.round == Round::none && d.type() != Type::f32)
    fail("sqrt.approx" + dot(d.type()), "the approximation is f32 only; give " + d.name() + " a rounding mode");
  if (m.round == Round::none) return approx("sqrt", d, a, m.ftz);
  float_only("sqrt", d, {&a}, m);
}

void AluOps::approx(const char* op, const Reg& d, const Src& a, bool ftz) {
  std::string opcode = std::string(op) + ".approx" + (ftz ? ".ftz" : "") + dot(d.type());
  expect_type(opcode, a, d.type(), "source a");
  emit(opcode, {operand_of(d), operand_of(a)});
}

// PTX ISA 9.7.3.19/20: the f32 forms are the ones every target has.
void AluOps::ex2_approx(const Reg& d, const Src& a, bool ftz) {
  if (d.type() != Type::f32) fail("ex2.approx" + dot(d.type()), d.name() + " is " + type_name(d.type()) + "; ex2.approx takes f32");
  approx("ex2", d, a, ftz);
}

void AluOps::lg2_approx(const Reg& d, const Src& a, bool ftz) {
  if (d.type() != Type::f32) fail("lg2.approx" + dot(d.type()), d.name() + " is " + type_name(d.type()) + "; lg2.approx takes f32");
  approx("lg2", d, a, ftz);
}

void AluOps::and_(const Reg& d, const Src& a, const Src& b) { int_only("and" + dot(bits_type(d.type())), d, {&a, &b}, d.type()); }
void AluOps::or_(const Reg& d, const Src& a, const Src& b) { int_only("or" + dot(bits_type(d.type())), d, {&a, &b}, d.type()); }
void AluOps::xor_(const Reg& d, const Src& a, const Src& b) { int_only("xor" + dot(bits_type(d.type())), d, {&a, &b}, d.type()); }
void AluOps::not_(const Reg& d, const Src& a) { int_only("not" + dot(bits_type(d.type())), d, {&a}, d.type()); }
void AluOps::not_(const Pred& d, const Pred& a) { emit("not.pred", {operand_of(d), operand_of(a)}); }
void AluOps::and_(const Pred& d, const Pred& a, const Pred& b) {
  emit("and.pred", {operand_of(d), operand_of(a), operand_of(b)});
}
void AluOps::or_(const Pred& d, const Pred& a, const Pred& b) {
  emit("or.pred", {operand_of(d), operand_of(a), operand_of(b)});
}
void AluOps::xor_(const Pred& d, const Pred& a, const Pred& b) {
  emit("xor.pred", {operand_of(d), operand_of(a), operand_of(b)});
}

void AluOps::shl(const Reg& d, const Src& a, const Src& amount) {
  std::string opcode = "shl" + dot(bits_type(d.type()));
  if (!ptx::is_integer(d.type())) fail(opcode, d.name() + " is " + type_name(d.type()) + "; shifts take integer types");
  expect_type(opcode, a, d.type(), "source a");
  expect_type(opcode, amount, Type::u32, "shift amount");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(amount)});
}

void AluOps::shr(const Reg& d, const Src& a, const Src& amount) {
  std::string opcode = "shr" + dot(ptx::is_signed(d.type()) ? d.type() : arith_type(d.type()));
  if (!ptx::is_integer(d.type())) fail(opcode, d.name() + " is " + type_name(d.type()) + "; shifts take integer types");
  expect_type(opcode, a, d.type(), "source a");
  expect_type(opcode, amount, Type::u32, "shift amount");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(amount)});
}

void AluOps::setp(const Pred& p, Cmp c, const Src& a, const Src& b) {
  const Src& typed = a.is_reg() ? a : b;
  if (!typed.is_reg())
    fail("setp." + std::string(ptx::name(c)),
         "both operands are immediates; one must be a register");
  Type t = typed.reg().type();
  if (ptx::is_bits(t)) t = (c == Cmp::eq || c == Cmp::ne) ? t : arith_type(t);
  std::string opcode = "setp." + std::string(ptx::name(c)) + dot(t);
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
  std::string opcode = "selp" + dot(move_type(d.type()));
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
