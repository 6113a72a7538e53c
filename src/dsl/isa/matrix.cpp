#include "warpforge/dsl/isa/matrix.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

std::string MatrixOps::opcode_for(const char* base, std::size_t count, bool trans, const Addr& a) {
  std::string opcode = std::string(base) + ".sync.aligned.m8n8.x" + std::to_string(count) +
                       (trans ? ".trans" : "") + ".shared.b16";
  if (count != 1 && count != 2 && count != 4)
    fail(std::string(base), std::to_string(count) + " registers; x1, x2 or x4 matrices take 1, 2 or 4");
  if (a.base && !ptx::is_integer(a.base->type()))
    fail(opcode, "address register " + a.base->name() + " is " + detail::type_name(a.base->type()) +
                     "; expected a 32- or 64-bit shared address");
  return opcode;
}

void MatrixOps::ldmatrix(const Regs& d, const Addr& a, bool trans) {
  std::string opcode = opcode_for("ldmatrix", d.size(), trans, a);
  require(opcode, Availability::since(75));
  for (const auto& r : d) expect_type(opcode, r, Type::b32, "destination");
  emit(opcode, {operand_of(d), operand_of(a)});
}

void MatrixOps::stmatrix(const Addr& a, const Regs& s, bool trans) {
  std::string opcode = opcode_for("stmatrix", s.size(), trans, a);
  require(opcode, Availability::since(90));
  for (const auto& r : s) expect_type(opcode, r, Type::b32, "source");
  emit(opcode, {operand_of(a), operand_of(s)});
}

}  // namespace warpforge::dsl
