#include "transpiler/wrappers.hpp"

#include "transpiler/wrap_families.hpp"

namespace warpforge::transpiler {

std::optional<Code> wrapper_call(const ptx::Instruction& inst, OperandWriter& ops) {
  using namespace wrap;
  if (inst.opcode == "bra") return branch(inst, ops);
  // The other wrappers emit unguarded instructions; guards are added around them.
  if (inst.guard) return std::nullopt;
  if (inst.opcode == "ret" || inst.opcode == "exit") return ret_or_exit(inst, ops);
  if (inst.opcode == "mov") return mov(inst, ops);
  if (inst.opcode == "setp") return setp(inst, ops);
  if (inst.opcode == "ld" || inst.opcode == "st") return memory(inst, ops);
  if (inst.opcode == "not") return not_(inst, ops);
  if (inst.modifiers.size() == 1 && inst.modifiers[0] == "pred") return pred_logic(inst, ops);
  if (inst.opcode == "shf") return shf(inst, ops);
  if (inst.opcode == "atom" || inst.opcode == "red") return atomic(inst, ops);
  if (inst.opcode == "cvt") return cvt(inst, ops);
  if (inst.opcode == "cvta") return cvta(inst, ops);
  if (inst.opcode == "selp") return selp(inst, ops);
  if (inst.opcode == "fma") return fma(inst, ops);
  if (inst.opcode == "prmt" || inst.opcode == "bfe" || inst.opcode == "bfi")
    return bitfield(inst, ops);
  if (inst.opcode == "popc" || inst.opcode == "clz" || inst.opcode == "brev" ||
      inst.opcode == "neg" || inst.opcode == "abs")
    return unary(inst, ops);
  if (inst.opcode == "bar" || inst.opcode == "barrier" || inst.opcode == "membar")
    return barrier(inst, ops);
  if (inst.opcode == "shfl" || inst.opcode == "vote" || inst.opcode == "activemask" ||
      inst.opcode == "redux")
    return warp(inst, ops);
  if (inst.opcode == "ex2" || inst.opcode == "sqrt") return special_function(inst, ops);
  if (inst.opcode == "wmma") return wmma(inst, ops);
  if (inst.opcode == "wgmma" || inst.opcode == "mma" || inst.opcode == "cp" ||
      inst.opcode == "fence" || inst.opcode == "mbarrier" || inst.opcode == "ldmatrix" ||
      inst.opcode == "stmatrix")
    return tensor_async(inst, ops);
  if ((inst.opcode == "mul" || inst.opcode == "mad") && inst.modifiers.size() == 2 &&
      (inst.modifiers[0] == "wide" || inst.modifiers[0] == "lo"))
    if (auto w = wide_or_lo(inst, ops)) return w;
  return binary(inst, ops);
}

}  // namespace warpforge::transpiler
