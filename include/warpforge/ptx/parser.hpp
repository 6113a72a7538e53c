// PTX text -> IR. Reads the PTX that nvcc emits and people write: every
// instruction is held generically (opcode, modifiers, operands), so a new
// instruction parses without code changes. emit(parse(x)) assembles to the
// same machine code as x; parse(emit(parse(x))) == parse(x).
//
// Comments and whitespace are not kept; `.reg .b32 a, b;` becomes one
// Variable per name.
#pragma once

#include <string_view>

#include "warpforge/ptx/module.hpp"

namespace warpforge::ptx {

// Throws ParseError (file, line, column, offending token, what was expected)
// for input that is not PTX; never crashes on any input.
Module parse(std::string_view text, std::string_view filename = "<input>");

}  // namespace warpforge::ptx
