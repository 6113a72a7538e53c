// IR -> PTX text. Deterministic: the same module always gives the same bytes.
// Layout: header, then module items in order; in each function the
// declarations come first (as the builder or parser placed them), one
// statement per line, nested blocks indented.
#pragma once

#include <string>

#include "warpforge/ptx/module.hpp"

namespace warpforge::ptx {

std::string emit(const Module& module);
std::string emit(const Function& function);
std::string emit(const Instruction& instruction);
std::string emit(const Variable& variable);  // without the trailing ';'

}  // namespace warpforge::ptx
