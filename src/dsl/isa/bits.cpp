#include "warpforge/dsl/isa/bits.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::dot;

void BitOps::prmt(const Reg& d, const Src& a, const Src& b, const Src& selector, PrmtMode mode) {
  static constexpr const char* kModes[] = {"", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"};
  std::string opcode = std::string("prmt.b32") + kModes[static_cast<int>(mode)];
  expect_type(opcode, d, Type::b32, "destination");
  expect_type(opcode, a, Type::b32, "source a");
  expect_type(opcode, b, Type::b32, "source b");
  expect_type(opcode, selector, Type::b32, "selector");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(b), operand_of(selector)});
}

void BitOps::lop3(const Reg& d, const Src& a, const Src& b, const Src& c, std::uint8_t lut) {
  expect_type("lop3.b32", d, Type::b32, "destination");
  expect_type("lop3.b32", a, Type::b32, "source a");
  expect_type("lop3.b32", b, Type::b32, "source b");
  expect_type("lop3.b32", c, Type::b32, "source c");
  emit("lop3.b32", {operand_of(d), operand_of(a), operand_of(b), operand_of(c), ptx::Operand::imm(lut)});
}

void BitOps::bfe(const Reg& d, const Src& a, const Src& start, const Src& length) {
  Type t = ptx::is_signed(d.type()) ? d.type() : detail::arith_type(d.type());
  std::string opcode = "bfe" + dot(t);
  if (ptx::bits(t) != 32 && ptx::bits(t) != 64) fail(opcode, "bfe takes 32- or 64-bit integers");
  expect_type(opcode, a, t, "source");
  expect_type(opcode, start, Type::u32, "start");
  expect_type(opcode, length, Type::u32, "length");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(start), operand_of(length)});
}

void BitOps::bfi(const Reg& d, const Src& insert, const Src& base, const Src& start, const Src& length) {
  Type t = detail::bits_type(d.type());
  std::string opcode = "bfi" + dot(t);
  if (ptx::bits(t) != 32 && ptx::bits(t) != 64) fail(opcode, "bfi takes 32- or 64-bit integers");
  expect_type(opcode, insert, t, "insert");
  expect_type(opcode, base, t, "base");
  expect_type(opcode, start, Type::u32, "start");
  expect_type(opcode, length, Type::u32, "length");
  emit(opcode, {operand_of(d), operand_of(insert), operand_of(base), operand_of(start), operand_of(length)});
}

namespace {
void count_bits(BitOps& k, const char* op, const Reg& d, const Src& a) {
  if (!a.is_reg()) k.fail(op, "the source must be a register");
  Type t = detail::bits_type(a.reg().type());
  std::string opcode = op + dot(t);
  // PTX ISA 9.7.1.13 popc / 9.7.1.14 clz: .b32 and .b64 only.
  if (t != Type::b32 && t != Type::b64)
    k.fail(opcode, "source " + a.reg().name() + " is " + detail::type_name(a.reg().type()) + "; " + op +
                       " takes 32- or 64-bit values");
  k.expect_type(opcode, d, Type::u32, "destination");
  k.emit(opcode, {k.operand_of(d), k.operand_of(a)});
}
}  // namespace

void BitOps::popc(const Reg& d, const Src& a) { count_bits(*this, "popc", d, a); }
void BitOps::clz(const Reg& d, const Src& a) { count_bits(*this, "clz", d, a); }

void BitOps::brev(const Reg& d, const Src& a) {
  std::string opcode = "brev" + dot(detail::bits_type(d.type()));
  // PTX ISA 9.7.1.18 brev: .b32 and .b64 only.
  if (ptx::bits(d.type()) != 32 && ptx::bits(d.type()) != 64)
    fail(opcode, d.name() + " is " + detail::type_name(d.type()) + "; brev takes 32- or 64-bit values");
  expect_type(opcode, a, d.type(), "source");
  emit(opcode, {operand_of(d), operand_of(a)});
}

void BitOps::shf(ShfDir dir, ShfMode mode, const Reg& d, const Src& a, const Src& b, const Src& c) {
  std::string opcode = std::string("shf.") + (dir == ShfDir::l ? "l" : "r") +
                       (mode == ShfMode::clamp ? ".clamp" : ".wrap") + ".b32";
  // The funnel shift is defined on 32-bit halves; the amount is an unsigned 32-bit value.
  if (ptx::bits(d.type()) != 32 || !ptx::is_integer(d.type()))
    fail(opcode, d.name() + " is " + detail::type_name(d.type()) + "; shf writes a 32-bit integer");
  expect_type(opcode, a, Type::b32, "source a");
  expect_type(opcode, b, Type::b32, "source b");
  expect_type(opcode, c, Type::u32, "shift amount");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(b), operand_of(c)});
}

}  // namespace warpforge::dsl
