// Control flow and barriers.
#include "transpiler/wrap_families.hpp"
#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

// bra[.uni] label, guarded or not.
std::optional<Code> branch(const ptx::Instruction& inst, OperandWriter& ops) {
  if (inst.operands.size() != 1 || inst.modifiers.size() > 1 ||
      (inst.modifiers.size() == 1 && inst.modifiers[0] != ptx::Mod::uni))
    return std::nullopt;
  auto target = ops.label(inst.operands[0]);
  if (!target) return std::nullopt;
  bool uni = !inst.modifiers.empty();
  std::string opts = uni ? ", {.uniform = true}" : "";
  if (!inst.guard) {
    if (!reproduces(inst, ops, [&](Sandbox& b) {
          b.k().bra(b.label(inst.operands[0].text), {.uniform = uni});
        }))
      return std::nullopt;
    return Code("k.bra(") + *target + Code(opts + ");");
  }
  ptx::Operand guard = ptx::Operand::reg(inst.guard->pred, inst.guard->negated);
  auto p = ops.pred_use(guard);
  if (!p || !reproduces(inst, ops, [&](Sandbox& b) {
        b.k().bra_if(b.pred(guard), b.label(inst.operands[0].text), {.uniform = uni});
      }))
    return std::nullopt;
  return Code("k.bra_if(") + *p + Code(", ") + *target + Code(opts + ");");
}

// ret and exit, without modifiers or operands.
std::optional<Code> ret_or_exit(const ptx::Instruction& inst, OperandWriter& ops) {
  if (!inst.modifiers.empty() || !inst.operands.empty()) return std::nullopt;
  bool ret = inst.opcode == ptx::Opcode::ret;
  if (!reproduces(inst, ops, [&](Sandbox& b) { ret ? b.k().ret() : b.k().exit(); }))
    return std::nullopt;
  return Code(ret ? "k.ret();" : "k.exit();");
}

// bar.sync id[, count], barrier.sync id[, count], barrier.cluster arrive/wait,
// bar.warp.sync mask, membar.level.
std::optional<Code> barrier(const ptx::Instruction& inst, OperandWriter& ops) {
  using M = ptx::Mod;
  using O = ptx::Opcode;
  auto args = sources(inst.operands, ops);
  if (!args) return std::nullopt;
  // The sources without their leading ", ".
  Code inner = args->text.empty() ? Code() : Code(args->text.substr(2));
  inner.values = args->values;
  if ((spelled(inst, O::bar, {M::sync}) || spelled(inst, O::barrier, {M::sync})) &&
      (inst.operands.size() == 1 || inst.operands.size() == 2)) {
    const bool aligned = inst.opcode == O::bar;
    return checked(inst, ops,
                   Code(aligned ? "k.bar_sync(" : "k.barrier_sync(") + inner + Code(");"),
                   [&](Sandbox& b) {
                     std::optional<dsl::Src> count;
                     if (inst.operands.size() == 2) count = b.src(inst.operands[1]);
                     if (aligned)
                       b.k().bar_sync(b.src(inst.operands[0]), count);
                     else
                       b.k().barrier_sync(b.src(inst.operands[0]), count);
                   });
  }
  // barrier.cluster.arrive.release[.aligned] and barrier.cluster.wait.acquire[.aligned].
  if (inst.opcode == O::barrier && inst.modifiers.size() >= 3 && inst.modifiers[0] == M::cluster &&
      inst.operands.empty()) {
    const bool arrive = inst.modifiers[1] == M::arrive, aligned = inst.modifiers.back() == M::aligned;
    return checked(
        inst, ops,
        Code(std::string(arrive ? "k.barrier_cluster_arrive(" : "k.barrier_cluster_wait(") +
             (aligned ? "" : "false") + ");"),
        [&](Sandbox& b) {
          if (arrive)
            b.k().barrier_cluster_arrive(aligned);
          else
            b.k().barrier_cluster_wait(aligned);
        });
  }
  if (spelled(inst, O::bar, {M::warp, M::sync}) && inst.operands.size() == 1)
    return checked(inst, ops, Code("k.bar_warp_sync(") + inner + Code(");"),
                   [&](Sandbox& b) { b.k().bar_warp_sync(b.src(inst.operands[0])); });
  static const std::map<M, std::pair<dsl::MembarLevel, std::string>> kMembar = {
      {M::cta, {dsl::MembarLevel::cta, "cta"}},
      {M::gl, {dsl::MembarLevel::gl, "gl"}},
      {M::sys, {dsl::MembarLevel::sys, "sys"}}};
  if (auto m = inst.modifiers.size() == 1 ? kMembar.find(inst.modifiers[0]) : kMembar.end();
      inst.opcode == O::membar && m != kMembar.end() && inst.operands.empty())
    return checked(inst, ops, Code("k.membar(MembarLevel::" + m->second.second + ");"),
                   [&](Sandbox& b) { b.k().membar(m->second.first); });
  return std::nullopt;
}

}  // namespace warpforge::transpiler::wrap
