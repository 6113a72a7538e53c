// The body of a function: instructions, labels, declarations, nested blocks
// and in-body directives (.pragma, .loc), in source order.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "warpforge/ptx/instruction.hpp"
#include "warpforge/ptx/variable.hpp"

namespace warpforge::ptx {

struct Label {
  std::string name;
  friend bool operator==(const Label&, const Label&) = default;
};

// The signature a `.callprototype` declares for indirect calls (PTX ISA
// 10.3 "call", 11.3.3 ".callprototype"): `(.param .b32 _) _ (.param .b32 _)`.
struct CallPrototype {
  std::vector<Variable> returns;
  std::vector<Variable> params;
  bool noreturn = false;
  friend bool operator==(const CallPrototype&, const CallPrototype&) = default;
};

// A directive held by name and operands: `.pragma "nounroll";`,
// `.loc 1 12 5`, `.file 1 "a.cu"`, `.maxnreg 128` ...
struct Directive {
  std::string name;  // without the dot
  std::vector<Operand> args;
  bool comma_separated = false;  // .maxntid 128, 1, 1 vs .loc 1 12 5
  bool semicolon = false;        // .pragma "x"; ends with ';', .loc does not
  // Indices of the args preceded by a comma, for directives that mix both
  // separators (`.loc 2 112 3, function_name $L__info_string0, inlined_at
  // 1 15 5`, `.file 1 "a.cu", 1700000000, 1234`); empty when the separators are
  // uniform, as comma_separated says.
  std::vector<std::size_t> comma_before;
  std::optional<CallPrototype> prototype;  // set for .callprototype, written before args
  friend bool operator==(const Directive&, const Directive&) = default;
};

struct Block;
using Statement = std::variant<Instruction, Label, Variable, Directive, Block>;

struct Block {
  std::vector<Statement> body;
  friend bool operator==(const Block&, const Block&) = default;
};

}  // namespace warpforge::ptx
