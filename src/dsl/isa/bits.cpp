#include "warpforge/dsl/isa/bits.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::mod;
using detail::O;

void BitOps::prmt(const Reg& d, const Src& a, const Src& b, const Src& selector, PrmtMode mode) {
  static constexpr M kModes[] = {M::f4e, M::b4e, M::rc8, M::ecl, M::ecr, M::rc16};
  ptx::Instruction opcode{O::prmt, {mod(Type::b32)}};
  if (mode != PrmtMode::none) opcode.modifiers.push_back(kModes[static_cast<int>(mode) - 1]);
  expect_type(opcode, d, Type::b32, "destination");
  expect_type(opcode, a, Type::b32, "source a");
  expect_type(opcode, b, Type::b32, "source b");
  expect_type(opcode, selector, Type::b32, "selector");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(b), operand_of(selector)});
}

void BitOps::lop3(const Reg& d, const Src& a, const Src& b, const Src& c, std::uint8_t lut) {
  const ptx::Instruction form{O::lop3, {mod(Type::b32)}};
  expect_type(form, d, Type::b32, "destination");
  expect_type(form, a, Type::b32, "source a");
  expect_type(form, b, Type::b32, "source b");
  expect_type(form, c, Type::b32, "source c");
  emit(form, {operand_of(d), operand_of(a), operand_of(b), operand_of(c), ptx::Operand::imm(lut)});
}

void BitOps::bfe(const Reg& d, const Src& a, const Src& start, const Src& length) {
  Type t = ptx::is_signed(d.type()) ? d.type() : detail::arith_type(d.type());
  const ptx::Instruction opcode{O::bfe, {mod(t)}};
  if (ptx::bits(t) != 32 && ptx::bits(t) != 64) fail(opcode, "bfe takes 32- or 64-bit integers");
  expect_type(opcode, a, t, "source");
  expect_type(opcode, start, Type::u32, "start");
  expect_type(opcode, length, Type::u32, "length");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(start), operand_of(length)});
}

void BitOps::bfi(const Reg& d, const Src& insert, const Src& base, const Src& start, const Src& length) {
  Type t = detail::bits_type(d.type());
  const ptx::Instruction opcode{O::bfi, {mod(t)}};
  if (ptx::bits(t) != 32 && ptx::bits(t) != 64) fail(opcode, "bfi takes 32- or 64-bit integers");
  expect_type(opcode, insert, t, "insert");
  expect_type(opcode, base, t, "base");
  expect_type(opcode, start, Type::u32, "start");
  expect_type(opcode, length, Type::u32, "length");
  emit(opcode, {operand_of(d), operand_of(insert), operand_of(base), operand_of(start), operand_of(length)});
}

namespace {
void count_bits(BitOps& k, O op, const Reg& d, const Src& a) {
  if (!a.is_reg()) k.fail(ptx::name(op), "the source must be a register");
  Type t = detail::bits_type(a.reg().type());
  const ptx::Instruction opcode{op, {mod(t)}};
  // PTX ISA 9.7.1.13 popc / 9.7.1.14 clz: .b32 and .b64 only.
  if (t != Type::b32 && t != Type::b64)
    k.fail(opcode, "source " + a.reg().name() + " is " + detail::type_name(a.reg().type()) + "; " +
                       std::string(ptx::name(op)) + " takes 32- or 64-bit values");
  k.expect_type(opcode, d, Type::u32, "destination");
  k.emit(opcode, {k.operand_of(d), k.operand_of(a)});
}
}  // namespace

void BitOps::popc(const Reg& d, const Src& a) { count_bits(*this, O::popc, d, a); }
void BitOps::clz(const Reg& d, const Src& a) { count_bits(*this, O::clz, d, a); }

void BitOps::brev(const Reg& d, const Src& a) {
  const ptx::Instruction opcode{O::brev, {mod(detail::bits_type(d.type()))}};
  // PTX ISA 9.7.1.18 brev: .b32 and .b64 only.
  if (ptx::bits(d.type()) != 32 && ptx::bits(d.type()) != 64)
    fail(opcode, d.name() + " is " + detail::type_name(d.type()) + "; brev takes 32- or 64-bit values");
  expect_type(opcode, a, d.type(), "source");
  emit(opcode, {operand_of(d), operand_of(a)});
}

void BitOps::shf(ShfDir dir, ShfMode mode, const Reg& d, const Src& a, const Src& b, const Src& c) {
  const ptx::Instruction opcode{O::shf, {dir == ShfDir::l ? M::l : M::r,
                                         mode == ShfMode::clamp ? M::clamp : M::wrap,
                                         mod(Type::b32)}};
  // The funnel shift is defined on 32-bit halves; the amount is an unsigned 32-bit value.
  if (ptx::bits(d.type()) != 32 || !ptx::is_integer(d.type()))
    fail(opcode, d.name() + " is " + detail::type_name(d.type()) + "; shf writes a 32-bit integer");
  expect_type(opcode, a, Type::b32, "source a");
  expect_type(opcode, b, Type::b32, "source b");
  expect_type(opcode, c, Type::u32, "shift amount");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(b), operand_of(c)});
}

}  // namespace warpforge::dsl
