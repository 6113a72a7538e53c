#include "warpforge/ptx/instruction.hpp"

#include <algorithm>

#include "warpforge/error.hpp"

namespace warpforge::ptx {

std::string Instruction::full_opcode() const {
  std::string out(name(opcode));
  for (const Mod m : modifiers) {
    out += '.';
    out += name(m);
  }
  return out;
}

bool Instruction::has(Mod m) const {
  return std::find(modifiers.begin(), modifiers.end(), m) != modifiers.end();
}

std::vector<Type> Instruction::types() const {
  std::vector<Type> out;
  for (const Mod m : modifiers)
    if (const auto t = type_of(m)) out.push_back(*t);
  return out;
}

std::optional<Instruction> Instruction::parse_opcode(std::string_view dotted, std::string& why) {
  const std::size_t first_dot = std::min(dotted.find('.'), dotted.size());
  const OpcodeInfo* known = find_opcode(dotted.substr(0, first_dot));
  if (!known) {
    why = "'" + std::string(dotted.substr(0, first_dot)) +
          "' is not a PTX opcode (PTX ISA 9.7, through ISA 9.0)";
    return std::nullopt;
  }
  Instruction inst;
  inst.opcode = known->opcode;
  for (std::size_t start = first_dot + 1; start <= dotted.size() && first_dot < dotted.size();) {
    const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
    const std::string_view word = dotted.substr(start, dot - start);
    const std::optional<Mod> m = find_mod(word);
    if (!m) {
      why = "'." + std::string(word) + "' is not a modifier of any PTX instruction (in '" +
            std::string(dotted) + "')";
      return std::nullopt;
    }
    inst.modifiers.push_back(*m);
    start = dot + 1;
  }
  return inst;
}

Instruction Instruction::parse_opcode(std::string_view dotted) {
  std::string why;
  std::optional<Instruction> inst = parse_opcode(dotted, why);
  if (!inst) throw PtxError(why);
  return std::move(*inst);
}

}  // namespace warpforge::ptx
