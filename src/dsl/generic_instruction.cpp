// The escape hatch `inst()`: any opcode, checked against the PTX vocabulary
// (ptx/vocabulary.hpp) where the opcode is in it.
#include <string>
#include <utility>

#include "warpforge/dsl/kernel_core.hpp"
#include "warpforge/ptx/vocabulary.hpp"

namespace warpforge::dsl {

void KernelCore::emit_generic(std::string_view opcode, std::vector<ptx::Operand> operands) {
  ptx::Instruction inst = ptx::Instruction::parse_opcode(std::string(opcode));
  if (const ptx::OpcodeInfo* known = ptx::find_opcode(inst.opcode)) {
    const ptx::Arity arity = known->arity;
    int n = static_cast<int>(operands.size());
    if (n < arity.min || n > arity.max)
      fail(inst.full_opcode(), "takes " +
                                   (arity.min == arity.max ? std::to_string(arity.min)
                                                           : std::to_string(arity.min) + " to " +
                                                                 std::to_string(arity.max)) +
                                   " operands, got " + std::to_string(n));
    require(inst.full_opcode(), known->availability);
  }
  inst.operands = std::move(operands);
  emit(std::move(inst));
}

}  // namespace warpforge::dsl
