// Internal: decoding of the tcgen05 instructions (PTX ISA 9.7.16) for
// decode_forms.cpp, kept apart so that the decoder's own tables stay about
// the older instructions.
#pragma once

#include <string>
#include <vector>

#include "program.hpp"
#include "warpforge/ptx/instruction.hpp"

namespace warpforge::sim {

// Sets the tcgen05 fields of d (program.hpp), whose op and Tcgen05Op the
// form table set (decode_forms.cpp), from `in`, taking the modifiers it reads
// out of `rest`; returns why the instruction is not simulated, or "".
std::string decode_tcgen05(const ptx::Instruction& in, Inst& d, std::vector<ptx::Mod>& rest);

// Checks the decoded operands' count and form; returns the refusal or "".
std::string validate_tcgen05(const Inst& d);

// The index of the first tcgen05 instruction of `code` whose .cta_group
// differs from the kernel's first, with why it is refused; code.size() when
// they all agree.
std::size_t mixed_cta_group(const std::vector<Inst>& code, std::string& why);

}  // namespace warpforge::sim
