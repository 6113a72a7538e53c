// LLVM, run as programs: opt promotes the emitter's allocas and optimises, llc
// compiles for a gfx target, ld.lld links the relocatable object into a code
// object (.hsaco), llvm-objdump disassembles it. LLVM 16 or newer is needed
// (Debian's LLVM 14 lacks gfx942); scripts/install-deps.sh installs LLVM 19.
// WARPFORGE_LLVM_BIN names another folder holding opt, llc, ld.lld and
// llvm-objdump.
#pragma once

#include <string>
#include <vector>

#include "warpforge/amdgpu/target.hpp"

namespace warpforge::amdgpu {

struct LlvmTools {
  std::string opt, llc, lld, objdump;
};

// The tools, or a ToolchainError saying which is missing and how to install it.
LlvmTools find_llvm_tools();

// LLVM IR -> optimised IR -> target assembly (text).
std::string compile_to_assembly(const std::string& llvm_ir, Target target);
// LLVM IR -> a linked code object (ELF, the bytes of a .hsaco file).
std::vector<char> compile_to_code_object(const std::string& llvm_ir, Target target);
// The disassembly of a code object (llvm-objdump -d).
std::string disassemble(const std::vector<char>& code_object, Target target);

}  // namespace warpforge::amdgpu
