// The wrapper families, one file each: the typed DSL call (a whole statement)
// for an instruction of the family, nullopt where no call reproduces it
// exactly. wrappers.cpp dispatches on the opcode.
#pragma once

#include <optional>

#include "transpiler/code.hpp"
#include "transpiler/operand_code.hpp"
#include "warpforge/ptx/instruction.hpp"

namespace warpforge::transpiler::wrap {

// wrap_control.cpp: bra (guarded or not), ret, exit, bar/barrier.sync, barrier.cluster,
// bar.warp.sync, membar.
std::optional<Code> branch(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> ret_or_exit(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> barrier(const ptx::Instruction& inst, OperandWriter& ops);
// wrap_alu.cpp: mov, setp, two-source operations, mul/mad .wide/.lo, selp, fma, ex2/sqrt.
std::optional<Code> mov(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> setp(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> binary(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> wide_or_lo(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> selp(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> fma(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> special_function(const ptx::Instruction& inst, OperandWriter& ops);
// wrap_bits.cpp: not, predicate logic, shf, prmt/bfe/bfi, popc/clz/brev and neg/abs.
std::optional<Code> not_(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> pred_logic(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> shf(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> bitfield(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> unary(const ptx::Instruction& inst, OperandWriter& ops);
// wrap_memory.cpp: ld/st, atom/red, cvta.
std::optional<Code> memory(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> atomic(const ptx::Instruction& inst, OperandWriter& ops);
std::optional<Code> cvta(const ptx::Instruction& inst, OperandWriter& ops);
// wrap_conversion.cpp: cvt, packed and unpacked included.
std::optional<Code> cvt(const ptx::Instruction& inst, OperandWriter& ops);
// wrap_warp.cpp: shfl.sync, vote.sync, redux.sync, activemask.
std::optional<Code> warp(const ptx::Instruction& inst, OperandWriter& ops);
// wrap_wmma.cpp: wmma.load, wmma.store and wmma.mma.
std::optional<Code> wmma(const ptx::Instruction& inst, OperandWriter& ops);
// wrap_async.cpp: wgmma fence/commit/wait, cp.async and bulk groups, fences, mbarrier,
// ldmatrix/stmatrix.
std::optional<Code> tensor_async(const ptx::Instruction& inst, OperandWriter& ops);

}  // namespace warpforge::transpiler::wrap
