// A PTX instruction held generically: opcode, dot-modifiers in written order,
// operands and an optional guard predicate (PTX ISA 9.1 "Instruction format").
// Any instruction PTX has, including ones warpforge does not wrap, fits.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "warpforge/ptx/operand.hpp"

namespace warpforge::ptx {

struct Guard {
  std::string pred;  // register name, e.g. %p1
  bool negated = false;
  friend bool operator==(const Guard&, const Guard&) = default;
};

struct Instruction {
  std::string opcode;                  // "mma"
  std::vector<std::string> modifiers;  // {"sync", "aligned", "m16n8k16", "row", ...}
  std::vector<Operand> operands;
  std::optional<Guard> guard;

  // "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
  std::string full_opcode() const;
  bool has_modifier(const std::string& m) const;

  // Splits "ld.global.v4.b32" into opcode and modifiers.
  static Instruction parse_opcode(const std::string& dotted);

  friend bool operator==(const Instruction&, const Instruction&) = default;
};

}  // namespace warpforge::ptx
