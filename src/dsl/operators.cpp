#include "warpforge/dsl/operators.hpp"

#include "type_names.hpp"
#include "warpforge/dsl/kernel_core.hpp"
#include "warpforge/error.hpp"

namespace warpforge::dsl {
namespace {

using detail::arith_type;
using detail::bits_type;
using detail::M;
using detail::mod;
using detail::O;

// The logical shift right of unsigned and bit types, arithmetic of signed ones
// (PTX ISA 9.7.8.8: shr.s is arithmetic, shr.u and shr.b logical).
ptx::Instruction shr_form(Type t) {
  return {O::shr, {mod(ptx::is_signed(t) ? t : arith_type(t))}};
}

KernelCore& kernel_of(const Reg& a, const char* op) {
  if (!a.valid()) throw DslError(std::string("operator") + op + ": uninitialised register");
  return *a.owner();
}

void require_integer(KernelCore& k, const Reg& a, const std::string& what) {
  // PTX has no 8-bit arithmetic (add.u8 does not exist): 16 bits and up.
  if (ptx::is_integer(a.type()) && ptx::bits(a.type()) < 16)
    k.fail(what, "operand " + a.name() + " is " + detail::type_name(a.type()) +
                     "; integer arithmetic is 16, 32 or 64 bits wide (cvt 8-bit values first)");
  if (!ptx::is_integer(a.type()))
    k.fail(what, "operand " + a.name() + " is " + detail::type_name(a.type()) +
                     "; operators are for integer registers (use the explicit float wrappers, "
                     "e.g. k.add(d, a, b, {Round::rn}))");
}

Reg binary(const char* sym, const ptx::Instruction& opcode_with_type, const Reg& a, const Src& b,
           Type result) {
  KernelCore& k = kernel_of(a, sym);
  require_integer(k, a, std::string("operator") + sym);
  k.expect_type(opcode_with_type, b, a.type(), "operand b");
  Reg d = k.reg(result);
  k.emit(opcode_with_type, {k.operand_of(d), k.operand_of(a), k.operand_of(b)});
  return d;
}

Reg shift(const char* sym, const ptx::Instruction& opcode, const Reg& a, const Src& b) {
  KernelCore& k = kernel_of(a, sym);
  require_integer(k, a, std::string("operator") + sym);
  // PTX ISA 9.7.8.7/8: the shift amount is always .u32.
  k.expect_type(opcode, b, Type::u32, "shift amount");
  Reg d = k.reg(a.type());
  k.emit(opcode, {k.operand_of(d), k.operand_of(a), k.operand_of(b)});
  return d;
}

Type compare_type(const Reg& a) {
  // PTX ISA 9.7.7.1: setp's integer forms take .u/.s types; a bit type compares as unsigned.
  return ptx::is_bits(a.type()) ? arith_type(a.type()) : a.type();
}

Pred compare(ptx::Cmp cmp, const Reg& a, const Src& b) {
  KernelCore& k = kernel_of(a, ptx::name(cmp).data());
  Type t = compare_type(a);
  const ptx::Instruction opcode{O::setp, {mod(cmp), mod(t)}};
  k.expect_type(opcode, b, t, "operand b");
  Pred p = k.pred();
  k.emit(opcode, {k.operand_of(p), k.operand_of(a), k.operand_of(b)});
  return p;
}

Pred combine(O op, const PredUse& a, const PredUse& b) {
  if (!a.pred.valid())
    throw DslError(std::string("operator") + (op == O::and_ ? "&&" : "||") +
                   ": uninitialised predicate");
  KernelCore& k = *a.pred.owner();
  // PTX ISA 9.7.8: and/or.pred take plain predicates; negate first where asked.
  auto plain = [&](const PredUse& p) {
    if (!p.negated) return p.pred;
    Pred n = k.pred();
    k.emit({O::not_, {mod(Type::pred)}}, {k.operand_of(n), k.operand_of(p.pred)});
    return n;
  };
  Pred x = plain(a), y = plain(b);
  Pred d = k.pred();
  k.emit({op, {mod(Type::pred)}}, {k.operand_of(d), k.operand_of(x), k.operand_of(y)});
  return d;
}

}  // namespace

Reg operator+(const Reg& a, const Src& b) {
  return binary("+", {O::add, {mod(arith_type(a.type()))}}, a, b, a.type());
}
Reg operator-(const Reg& a, const Src& b) {
  return binary("-", {O::sub, {mod(arith_type(a.type()))}}, a, b, a.type());
}
Reg operator*(const Reg& a, const Src& b) {
  return binary("*", {O::mul, {M::lo, mod(arith_type(a.type()))}}, a, b, a.type());
}
Reg operator&(const Reg& a, const Src& b) {
  return binary("&", {O::and_, {mod(bits_type(a.type()))}}, a, b, a.type());
}
Reg operator|(const Reg& a, const Src& b) {
  return binary("|", {O::or_, {mod(bits_type(a.type()))}}, a, b, a.type());
}
Reg operator^(const Reg& a, const Src& b) {
  return binary("^", {O::xor_, {mod(bits_type(a.type()))}}, a, b, a.type());
}
Reg operator<<(const Reg& a, const Src& b) {
  return shift("<<", {O::shl, {mod(bits_type(a.type()))}}, a, b);
}
Reg operator>>(const Reg& a, const Src& b) { return shift(">>", shr_form(a.type()), a, b); }

Reg operator~(const Reg& a) {
  KernelCore& k = kernel_of(a, "~");
  require_integer(k, a, "operator~");
  Reg d = k.reg(a.type());
  k.emit({O::not_, {mod(bits_type(a.type()))}}, {k.operand_of(d), k.operand_of(a)});
  return d;
}

Reg operator-(const Reg& a) {
  KernelCore& k = kernel_of(a, "-");
  require_integer(k, a, "unary operator-");
  if (!ptx::is_signed(a.type()))
    k.fail("neg", "operand " + a.name() + " is " + detail::type_name(a.type()) + "; negation needs a signed type");
  Reg d = k.reg(a.type());
  k.emit({O::neg, {mod(a.type())}}, {k.operand_of(d), k.operand_of(a)});
  return d;
}

Pred operator<(const Reg& a, const Src& b) { return compare(ptx::Cmp::lt, a, b); }
Pred operator<=(const Reg& a, const Src& b) { return compare(ptx::Cmp::le, a, b); }
Pred operator>(const Reg& a, const Src& b) { return compare(ptx::Cmp::gt, a, b); }
Pred operator>=(const Reg& a, const Src& b) { return compare(ptx::Cmp::ge, a, b); }
Pred operator==(const Reg& a, const Src& b) { return compare(ptx::Cmp::eq, a, b); }
Pred operator!=(const Reg& a, const Src& b) { return compare(ptx::Cmp::ne, a, b); }

Pred operator&&(const PredUse& a, const PredUse& b) { return combine(O::and_, a, b); }
Pred operator||(const PredUse& a, const PredUse& b) { return combine(O::or_, a, b); }

namespace {
void update(Reg& self, const char* sym, const ptx::Instruction& opcode, const Src& rhs,
            Type rhs_type) {
  KernelCore& k = kernel_of(self, sym);
  require_integer(k, self, std::string("operator") + sym);
  k.expect_type(opcode, rhs, rhs_type, "operand");
  k.emit(opcode, {k.operand_of(self), k.operand_of(self), k.operand_of(rhs)});
}
}  // namespace

Reg& Reg::operator+=(const Src& r) {
  update(*this, "+=", {O::add, {mod(arith_type(type_))}}, r, type_);
  return *this;
}
Reg& Reg::operator-=(const Src& r) {
  update(*this, "-=", {O::sub, {mod(arith_type(type_))}}, r, type_);
  return *this;
}
Reg& Reg::operator*=(const Src& r) {
  update(*this, "*=", {O::mul, {M::lo, mod(arith_type(type_))}}, r, type_);
  return *this;
}
Reg& Reg::operator&=(const Src& r) {
  update(*this, "&=", {O::and_, {mod(bits_type(type_))}}, r, type_);
  return *this;
}
Reg& Reg::operator|=(const Src& r) {
  update(*this, "|=", {O::or_, {mod(bits_type(type_))}}, r, type_);
  return *this;
}
Reg& Reg::operator^=(const Src& r) {
  update(*this, "^=", {O::xor_, {mod(bits_type(type_))}}, r, type_);
  return *this;
}
Reg& Reg::operator<<=(const Src& r) {
  update(*this, "<<=", {O::shl, {mod(bits_type(type_))}}, r, Type::u32);
  return *this;
}
Reg& Reg::operator>>=(const Src& r) {
  update(*this, ">>=", shr_form(type_), r, Type::u32);
  return *this;
}

}  // namespace warpforge::dsl
