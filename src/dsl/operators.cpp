#include "warpforge/dsl/operators.hpp"

#include "type_names.hpp"
#include "warpforge/dsl/kernel_core.hpp"
#include "warpforge/error.hpp"

namespace warpforge::dsl {
namespace {

using detail::arith_type;
using detail::bits_type;
using detail::dot;

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

Reg binary(const char* sym, const std::string& opcode_with_type, const Reg& a, const Src& b, Type result) {
  KernelCore& k = kernel_of(a, sym);
  require_integer(k, a, std::string("operator") + sym);
  k.expect_type(opcode_with_type, b, a.type(), "operand b");
  Reg d = k.reg(result);
  k.emit(opcode_with_type, {k.operand_of(d), k.operand_of(a), k.operand_of(b)});
  return d;
}

Reg shift(const char* sym, const std::string& opcode, const Reg& a, const Src& b) {
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

Pred compare(const char* cmp, const Reg& a, const Src& b) {
  KernelCore& k = kernel_of(a, cmp);
  Type t = compare_type(a);
  std::string opcode = std::string("setp.") + cmp + dot(t);
  k.expect_type(opcode, b, t, "operand b");
  Pred p = k.pred();
  k.emit(opcode, {k.operand_of(p), k.operand_of(a), k.operand_of(b)});
  return p;
}

Pred combine(const char* op, const PredUse& a, const PredUse& b) {
  if (!a.pred.valid()) throw DslError(std::string("operator") + (op[0] == 'a' ? "&&" : "||") + ": uninitialised predicate");
  KernelCore& k = *a.pred.owner();
  // PTX ISA 9.7.8: and/or.pred take plain predicates; negate first where asked.
  auto plain = [&](const PredUse& p) {
    if (!p.negated) return p.pred;
    Pred n = k.pred();
    k.emit("not.pred", {k.operand_of(n), k.operand_of(p.pred)});
    return n;
  };
  Pred x = plain(a), y = plain(b);
  Pred d = k.pred();
  k.emit(std::string(op) + ".pred", {k.operand_of(d), k.operand_of(x), k.operand_of(y)});
  return d;
}

}  // namespace

Reg operator+(const Reg& a, const Src& b) { return binary("+", "add" + dot(arith_type(a.type())), a, b, a.type()); }
Reg operator-(const Reg& a, const Src& b) { return binary("-", "sub" + dot(arith_type(a.type())), a, b, a.type()); }
Reg operator*(const Reg& a, const Src& b) {
  return binary("*", "mul.lo" + dot(arith_type(a.type())), a, b, a.type());
}
Reg operator&(const Reg& a, const Src& b) { return binary("&", "and" + dot(bits_type(a.type())), a, b, a.type()); }
Reg operator|(const Reg& a, const Src& b) { return binary("|", "or" + dot(bits_type(a.type())), a, b, a.type()); }
Reg operator^(const Reg& a, const Src& b) { return binary("^", "xor" + dot(bits_type(a.type())), a, b, a.type()); }
Reg operator<<(const Reg& a, const Src& b) { return shift("<<", "shl" + dot(bits_type(a.type())), a, b); }
Reg operator>>(const Reg& a, const Src& b) {
  // PTX ISA 9.7.8.8: shr.s is arithmetic, shr.u and shr.b logical.
  return shift(">>", "shr" + dot(ptx::is_signed(a.type()) ? a.type() : arith_type(a.type())), a, b);
}

Reg operator~(const Reg& a) {
  KernelCore& k = kernel_of(a, "~");
  require_integer(k, a, "operator~");
  Reg d = k.reg(a.type());
  k.emit("not" + dot(bits_type(a.type())), {k.operand_of(d), k.operand_of(a)});
  return d;
}

Reg operator-(const Reg& a) {
  KernelCore& k = kernel_of(a, "-");
  require_integer(k, a, "unary operator-");
  if (!ptx::is_signed(a.type()))
    k.fail("neg", "operand " + a.name() + " is " + detail::type_name(a.type()) + "; negation needs a signed type");
  Reg d = k.reg(a.type());
  k.emit("neg" + dot(a.type()), {k.operand_of(d), k.operand_of(a)});
  return d;
}

Pred operator<(const Reg& a, const Src& b) { return compare("lt", a, b); }
Pred operator<=(const Reg& a, const Src& b) { return compare("le", a, b); }
Pred operator>(const Reg& a, const Src& b) { return compare("gt", a, b); }
Pred operator>=(const Reg& a, const Src& b) { return compare("ge", a, b); }
Pred operator==(const Reg& a, const Src& b) { return compare("eq", a, b); }
Pred operator!=(const Reg& a, const Src& b) { return compare("ne", a, b); }

Pred operator&&(const PredUse& a, const PredUse& b) { return combine("and", a, b); }
Pred operator||(const PredUse& a, const PredUse& b) { return combine("or", a, b); }

namespace {
void update(Reg& self, const char* sym, const std::string& opcode, const Src& rhs, Type rhs_type) {
  KernelCore& k = kernel_of(self, sym);
  require_integer(k, self, std::string("operator") + sym);
  k.expect_type(opcode, rhs, rhs_type, "operand");
  k.emit(opcode, {k.operand_of(self), k.operand_of(self), k.operand_of(rhs)});
}
}  // namespace

Reg& Reg::operator+=(const Src& r) { update(*this, "+=", "add" + dot(arith_type(type_)), r, type_); return *this; }
Reg& Reg::operator-=(const Src& r) { update(*this, "-=", "sub" + dot(arith_type(type_)), r, type_); return *this; }
Reg& Reg::operator*=(const Src& r) { update(*this, "*=", "mul.lo" + dot(arith_type(type_)), r, type_); return *this; }
Reg& Reg::operator&=(const Src& r) { update(*this, "&=", "and" + dot(bits_type(type_)), r, type_); return *this; }
Reg& Reg::operator|=(const Src& r) { update(*this, "|=", "or" + dot(bits_type(type_)), r, type_); return *this; }
Reg& Reg::operator^=(const Src& r) { update(*this, "^=", "xor" + dot(bits_type(type_)), r, type_); return *this; }
Reg& Reg::operator<<=(const Src& r) { update(*this, "<<=", "shl" + dot(bits_type(type_)), r, Type::u32); return *this; }
Reg& Reg::operator>>=(const Src& r) {
  update(*this, ">>=", "shr" + dot(ptx::is_signed(type_) ? type_ : arith_type(type_)), r, Type::u32);
  return *this;
}

}  // namespace warpforge::dsl
