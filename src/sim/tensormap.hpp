// Internal: decoding of tensormap.replace and tensormap.cp_fenceproxy (PTX
// ISA 9.7.9.27-28) for decode_forms.cpp; their execution is exec_tensormap
// (execute.hpp), both in tensormap.cpp.
#pragma once

#include <string>
#include <vector>

#include "program.hpp"
#include "warpforge/ptx/instruction.hpp"

namespace warpforge::sim {

// The details of tensormap.replace and tensormap.cp_fenceproxy for
// decode_forms.cpp's table, which has set d's op and mode: the replaced
// field (TensorMapField) in d.extent, taking the words read out of `rest`;
// returns why the instruction is not simulated, or "".
std::string tensormap_replace(const ptx::Instruction& in, Inst& d, std::vector<ptx::Mod>& rest);
std::string tensormap_cp_fenceproxy(const ptx::Instruction& in, Inst& d,
                                    std::vector<ptx::Mod>& rest);

}  // namespace warpforge::sim
