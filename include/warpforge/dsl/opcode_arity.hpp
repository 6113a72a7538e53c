// How many operands each PTX opcode takes (PTX ISA 9.7, each instruction's
// syntax), so the generic `inst()` escape hatch still catches a missing or
// extra operand. Opcodes not listed are passed through unchecked.
#pragma once

#include <optional>
#include <string_view>

namespace warpforge::dsl {

struct Arity {
  int min;
  int max;
};

std::optional<Arity> opcode_arity(std::string_view opcode);

}  // namespace warpforge::dsl
