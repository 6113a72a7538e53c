// load(): PTX IR -> the simulator's pre-decoded kernels (program.hpp).
#pragma once

#include <map>
#include <string>

#include "program.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::sim {

// Module-scope variables the kernels may name, with their addresses (globals
// in the simulated global space, constants in the module's constant bank).
using ModuleSymbols = std::map<std::string, SymbolInfo>;

// Decodes the entry `function`, the module's item number `item_index`. Throws
// SimError naming the instruction and its line in ptx::emit(module) for any
// instruction, modifier or operand the simulator does not execute.
Kernel decode_kernel(const ptx::Module& module, std::size_t item_index,
                     const ModuleSymbols& symbols);

// The line of ptx::emit(module) on which item `item_index` (a function) has
// its first body statement.
int first_body_line(const ptx::Module& module, std::size_t item_index);

}  // namespace warpforge::sim
