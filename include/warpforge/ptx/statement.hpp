// The body of a function: instructions, labels, declarations, nested blocks
// and in-body directives (.pragma, .loc), in source order.
#pragma once

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

// A directive held by name and operands: `.pragma "nounroll";`,
// `.loc 1 12 5`, `.file 1 "a.cu"`, `.maxnreg 128` ...
struct Directive {
  std::string name;  // without the dot
  std::vector<Operand> args;
  bool comma_separated = false;  // .maxntid 128, 1, 1 vs .loc 1 12 5
  bool semicolon = false;        // .pragma "x"; ends with ';', .loc does not
  friend bool operator==(const Directive&, const Directive&) = default;
};

struct Block;
using Statement = std::variant<Instruction, Label, Variable, Directive, Block>;

struct Block {
  std::vector<Statement> body;
  friend bool operator==(const Block&, const Block&) = default;
};

}  // namespace warpforge::ptx
