// The verifier's checks against the PTX ISA, those ptxas would otherwise be
// the first to make: the module's .version and .target, each instruction's
// opcode and the targets that have it, and the types of its register operands
// (PTX ISA 6.1 "Operand Type Information"). Private to the ptx layer; ptx::verify
// runs them (verifier.hpp).
#pragma once

#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"

namespace warpforge::ptx {

// A .version that is no published PTX ISA version; a .target name that is no
// target of the ISA, or one that version does not have; an option first.
void check_header(const Module& m, std::vector<std::string>& problems);

// The instructions of one function body whose register and label names are
// unique (with_unique_names), each problem starting "function <name>: ".
void check_instructions(const Module& m, const Function& f, const Block& unique_body,
                        std::vector<std::string>& problems);

}  // namespace warpforge::ptx
