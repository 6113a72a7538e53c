// Typed DSL wrappers for instructions that map one-to-one onto one: `k.bra_if`,
// `k.mov(r[1].as(u32), SReg::tid_x)`, `k.add(...)`, `k.setp(...)`. A wrapper
// is used only after a sandbox kernel, holding registers of the same names
// and types, has run the very call and emitted the very instruction.
#pragma once

#include <optional>

#include "transpiler/code.hpp"
#include "transpiler/operand_code.hpp"
#include "warpforge/ptx/instruction.hpp"

namespace warpforge::transpiler {

// The wrapper call (a whole statement, guard included) for `inst`; nullopt
// where no wrapper reproduces it exactly.
std::optional<Code> wrapper_call(const ptx::Instruction& inst, OperandWriter& ops);

}  // namespace warpforge::transpiler
