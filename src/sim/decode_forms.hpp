// Internal: what an instruction executes (program.hpp's Op and its mode),
// read from its opcode and the form words among its modifiers, for
// decode.cpp. One table, a line a form (decode_forms.cpp): a new
// instruction for the simulator is a line there and its executor.
#pragma once

#include <string>
#include <vector>

#include "program.hpp"
#include "warpforge/ptx/instruction.hpp"

namespace warpforge::sim {

// Sets d.op, and what the form fixes (d.mode, the shapes and counts of
// wgmma, wmma, tensor copies and tcgen05), for `in`, taking the words it
// reads out of `rest`, which holds in's modifiers and keeps those left for
// their classes' meanings (decode.cpp's parse_modifiers). Returns why the
// instruction is not simulated, or "".
std::string decode_form(const ptx::Instruction& in, Inst& d, std::vector<ptx::Mod>& rest);

// Takes `m` out of `rest`; whether it was there.
bool take(std::vector<ptx::Mod>& rest, ptx::Mod m);

}  // namespace warpforge::sim
