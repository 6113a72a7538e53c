#include "warpforge/ptx/instruction.hpp"

#include <algorithm>

namespace warpforge::ptx {

std::string Instruction::full_opcode() const {
  std::string out = opcode;
  for (const auto& m : modifiers) out += "." + m;
  return out;
}

bool Instruction::has_modifier(const std::string& m) const {
  return std::find(modifiers.begin(), modifiers.end(), m) != modifiers.end();
}

Instruction Instruction::parse_opcode(const std::string& dotted) {
  Instruction inst;
  std::size_t start = 0;
  bool first = true;
  while (start <= dotted.size()) {
    std::size_t dot = dotted.find('.', start);
    std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (first) inst.opcode = part;
    else inst.modifiers.push_back(part);
    first = false;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return inst;
}

}  // namespace warpforge::ptx
