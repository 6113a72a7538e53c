// Internal: decoding of tensormap.replace and tensormap.cp_fenceproxy (PTX
// ISA 9.7.9.27-28) for decode.cpp; their execution is exec_tensormap
// (execute.hpp), both in tensormap.cpp.
#pragma once

#include <string>
#include <vector>

#include "program.hpp"
#include "warpforge/ptx/instruction.hpp"

namespace warpforge::sim {

// Sets d's op, mode (TensormapOp), extent (the replaced TensorMapField) and
// space from `in`, erasing the modifiers it consumed from `mods`; returns why
// the instruction is not simulated, or an empty string.
std::string decode_tensormap(const ptx::Instruction& in, Inst& d, std::vector<std::string>& mods);

}  // namespace warpforge::sim
