// Structural checks on a module, beyond what parsing or building guarantees:
// names defined once, branch targets and call targets that exist, registers
// declared before use. Not a type checker: ptxas remains the judge of operand
// types and instruction availability.
#pragma once

#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"

namespace warpforge::ptx {

// Every problem found, each a sentence naming the function and the name at
// fault; empty for a well-formed module.
std::vector<std::string> verify(const Module& module);

}  // namespace warpforge::ptx
