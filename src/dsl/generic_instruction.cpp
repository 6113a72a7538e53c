// The escape hatch `inst()`: any instruction of the PTX vocabulary
// (ptx/vocabulary.hpp), its words read through it, its operand count and
// target checked against it.
#include <string>
#include <utility>

#include "warpforge/dsl/kernel_core.hpp"
#include "warpforge/ptx/vocabulary.hpp"

namespace warpforge::dsl {

void KernelCore::inst(std::string_view opcode, std::vector<ptx::Operand> operands) {
  std::string why;
  std::optional<ptx::Instruction> parsed = ptx::Instruction::parse_opcode(opcode, why);
  if (!parsed) fail(opcode, why);
  parsed->operands = std::move(operands);
  inst(std::move(*parsed));
}

void KernelCore::inst(ptx::Instruction form) {
  const ptx::OpcodeInfo& known = ptx::info(form.opcode);
  const ptx::Arity arity = known.arity;
  const int n = static_cast<int>(form.operands.size());
  if (n < arity.min || n > arity.max)
    fail(form, "takes " +
                   (arity.min == arity.max
                        ? std::to_string(arity.min)
                        : std::to_string(arity.min) + " to " + std::to_string(arity.max)) +
                   " operands, got " + std::to_string(n));
  require(form, known.availability);
  emit(std::move(form));
}

}  // namespace warpforge::dsl
