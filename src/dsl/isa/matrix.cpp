#include "warpforge/dsl/isa/matrix.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

ptx::Instruction MatrixOps::opcode_for(ptx::Opcode base, std::size_t count, bool trans,
                                       const Addr& a) {
  using detail::M;
  if (count != 1 && count != 2 && count != 4)
    fail(ptx::name(base), std::to_string(count) + " registers; x1, x2 or x4 matrices take 1, 2 or 4");
  ptx::Instruction opcode{base, {M::sync, M::aligned, M::m8n8, count == 1 ? M::x1 : count == 2 ? M::x2 : M::x4}};
  if (trans) opcode.modifiers.push_back(M::trans);
  opcode.modifiers.push_back(M::shared);
  opcode.modifiers.push_back(detail::mod(Type::b16));
  if (a.base && !ptx::is_integer(a.base->type()))
    fail(opcode, "address register " + a.base->name() + " is " + detail::type_name(a.base->type()) +
                     "; expected a 32- or 64-bit shared address");
  return opcode;
}

void MatrixOps::ldmatrix(const Regs& d, const Addr& a, bool trans) {
  const ptx::Instruction opcode = opcode_for(ptx::Opcode::ldmatrix, d.size(), trans, a);
  require(opcode, Availability::since(75));
  for (const auto& r : d) expect_type(opcode, r, Type::b32, "destination");
  emit(opcode, {operand_of(d), operand_of(a)});
}

void MatrixOps::stmatrix(const Addr& a, const Regs& s, bool trans) {
  const ptx::Instruction opcode = opcode_for(ptx::Opcode::stmatrix, s.size(), trans, a);
  require(opcode, Availability::since(90));
  for (const auto& r : s) expect_type(opcode, r, Type::b32, "source");
  emit(opcode, {operand_of(a), operand_of(s)});
}

}  // namespace warpforge::dsl
