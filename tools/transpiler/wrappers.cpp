#include "transpiler/wrappers.hpp"

#include "transpiler/wrap_families.hpp"

namespace warpforge::transpiler {

std::optional<Code> wrapper_call(const ptx::Instruction& inst, OperandWriter& ops) {
  using namespace wrap;
  using O = ptx::Opcode;
  if (inst.opcode == O::bra) return branch(inst, ops);
  // The other wrappers emit unguarded instructions; guards are added around them.
  if (inst.guard) return std::nullopt;
  if (inst.modifiers.size() == 1 && inst.modifiers[0] == ptx::mod(ptx::Type::pred) &&
      inst.opcode != O::mov && inst.opcode != O::not_)
    return pred_logic(inst, ops);
  switch (inst.opcode) {
    case O::ret:
    case O::exit:
      return ret_or_exit(inst, ops);
    case O::mov:
      return mov(inst, ops);
    case O::setp:
      return setp(inst, ops);
    case O::ld:
    case O::st:
      return memory(inst, ops);
    case O::not_:
      return not_(inst, ops);
    case O::shf:
      return shf(inst, ops);
    case O::atom:
    case O::red:
      return atomic(inst, ops);
    case O::cvt:
      return cvt(inst, ops);
    case O::cvta:
      return cvta(inst, ops);
    case O::selp:
      return selp(inst, ops);
    case O::fma:
      return fma(inst, ops);
    case O::prmt:
    case O::bfe:
    case O::bfi:
      return bitfield(inst, ops);
    case O::popc:
    case O::clz:
    case O::brev:
    case O::neg:
    case O::abs:
      return unary(inst, ops);
    case O::bar:
    case O::barrier:
    case O::membar:
      return barrier(inst, ops);
    case O::shfl:
    case O::vote:
    case O::activemask:
    case O::redux:
      return warp(inst, ops);
    case O::ex2:
    case O::sqrt:
      return special_function(inst, ops);
    case O::wmma:
      return wmma(inst, ops);
    case O::wgmma:
    case O::mma:
    case O::cp:
    case O::fence:
    case O::mbarrier:
    case O::ldmatrix:
    case O::stmatrix:
      return tensor_async(inst, ops);
    case O::mul:
    case O::mad:
      if (inst.modifiers.size() == 2 &&
          (inst.modifiers[0] == ptx::Mod::wide || inst.modifiers[0] == ptx::Mod::lo))
        if (auto w = wide_or_lo(inst, ops)) return w;
      return binary(inst, ops);
    default:
      return binary(inst, ops);
  }
}

}  // namespace warpforge::transpiler
