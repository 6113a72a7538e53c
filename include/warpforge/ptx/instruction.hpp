// A PTX instruction: opcode, dot-modifiers in written order, operands and an
// optional guard predicate (PTX ISA 9.1 "Instruction format"). The opcode and
// the modifiers are the vocabulary's enumerators (vocabulary.hpp,
// modifiers.hpp), so every instruction of the PTX ISA fits and nothing else
// does; operands stay as written.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/ptx/modifiers.hpp"
#include "warpforge/ptx/operand.hpp"
#include "warpforge/ptx/vocabulary.hpp"

namespace warpforge::ptx {

struct Guard {
  std::string pred;  // register name, e.g. %p1
  bool negated = false;
  friend bool operator==(const Guard&, const Guard&) = default;
};

struct Instruction {
  Opcode opcode = Opcode::mov;
  std::vector<Mod> modifiers;  // {sync, aligned, m16n8k16, row, ...}
  std::vector<Operand> operands;
  std::optional<Guard> guard;

  // "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
  std::string full_opcode() const;
  bool has(Mod m) const;
  // The type modifiers in written order (cvt.rn.f16x2.f32: f16x2, f32).
  std::vector<Type> types() const;

  // Splits "ld.global.v4.b32" into opcode and modifiers through the
  // vocabulary; nullopt, with `why` naming the word, when a word is none of
  // PTX's.
  static std::optional<Instruction> parse_opcode(std::string_view dotted, std::string& why);
  // The same, refusing such a word with a PtxError.
  static Instruction parse_opcode(std::string_view dotted);

  friend bool operator==(const Instruction&, const Instruction&) = default;
};

}  // namespace warpforge::ptx
