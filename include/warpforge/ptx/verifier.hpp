// Checks on a module, beyond what parsing or building guarantees: names
// defined once, branch targets and call targets that exist, registers
// declared before use; and against the PTX ISA, what `warpforge check
// --no-ptxas` must catch without ptxas: a .version or .target the ISA lacks,
// a target older than the version allows, an opcode that is no instruction,
// an instruction of warpforge's vocabulary on a target that lacks it, and a
// register whose type does not fit the instruction's type (PTX ISA 6.1, for
// the instructions whose one type names their operands: the arithmetic,
// logic, moves, comparisons, ld/st and cvt). ptxas remains the judge of the
// rest (modifier combinations, the other instructions' operand types).
#pragma once

#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"

namespace warpforge::ptx {

// Every problem found, each a sentence naming the function and the name at
// fault; empty for a well-formed module.
std::vector<std::string> verify(const Module& module);

}  // namespace warpforge::ptx
