#include "warpforge/dsl/opcode_arity.hpp"

#include <array>
#include <utility>

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

std::optional<Arity> opcode_arity(std::string_view opcode) {
  // Counts include the destination; vectors {a, b} and addresses [a] count as one.
  static constexpr std::array<std::pair<std::string_view, Arity>, 52> kTable = {{
      {"mov", {2, 2}},      {"add", {3, 3}},       {"sub", {3, 3}},      {"mul", {3, 3}},
      {"mad", {4, 4}},      {"fma", {4, 4}},       {"div", {3, 3}},      {"rem", {3, 3}},
      {"abs", {2, 2}},      {"neg", {2, 2}},       {"min", {3, 3}},      {"max", {3, 3}},
      {"and", {3, 3}},      {"or", {3, 3}},        {"xor", {3, 3}},      {"not", {2, 2}},
      {"cnot", {2, 2}},     {"shl", {3, 3}},       {"shr", {3, 3}},      {"popc", {2, 2}},
      {"clz", {2, 2}},      {"brev", {2, 2}},      {"bfe", {4, 4}},      {"bfi", {5, 5}},
      {"prmt", {4, 4}},     {"lop3", {5, 5}},      {"setp", {3, 4}},     {"selp", {4, 4}},
      {"cvt", {2, 3}},      {"cvta", {2, 2}},      {"ld", {2, 3}},       {"st", {2, 2}},
      {"rcp", {2, 2}},      {"sqrt", {2, 2}},      {"ex2", {2, 2}},      {"lg2", {2, 2}},
      {"bra", {1, 1}},      {"ret", {0, 0}},       {"exit", {0, 0}},     {"bar", {1, 2}},
      {"membar", {0, 0}},   {"shfl", {5, 5}},      {"vote", {3, 3}},     {"redux", {3, 3}},
      {"atom", {3, 4}},     {"red", {2, 2}},       {"mma", {4, 4}},      {"ldmatrix", {2, 2}},
      {"stmatrix", {2, 2}}, {"activemask", {1, 1}}, {"elect", {1, 1}},   {"setmaxnreg", {1, 1}},
  }};
  for (const auto& [name, arity] : kTable)
    if (name == opcode) return arity;
  return std::nullopt;
}

void KernelCore::emit_generic(std::string_view opcode, std::vector<ptx::Operand> operands) {
  ptx::Instruction inst = ptx::Instruction::parse_opcode(std::string(opcode));
  if (auto arity = opcode_arity(inst.opcode)) {
    int n = static_cast<int>(operands.size());
    if (n < arity->min || n > arity->max)
      fail(inst.full_opcode(), "takes " +
                                   (arity->min == arity->max ? std::to_string(arity->min)
                                                             : std::to_string(arity->min) + " to " +
                                                                   std::to_string(arity->max)) +
                                   " operands, got " + std::to_string(n));
  }
  inst.operands = std::move(operands);
  emit(std::move(inst));
}

}  // namespace warpforge::dsl
