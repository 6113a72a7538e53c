// Control flow and barriers.
#include "transpiler/wrap_families.hpp"
#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

// bra[.uni] label, guarded or not.
std::optional<Code> branch(const ptx::Instruction& inst, OperandWriter& ops) {
  if (inst.operands.size() != 1 || inst.modifiers.size() > 1 ||
      (inst.modifiers.size() == 1 && inst.modifiers[0] != "uni"))
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
  bool ret = inst.opcode == "ret";
  if (!reproduces(inst, ops, [&](Sandbox& b) { ret ? b.k().ret() : b.k().exit(); }))
    return std::nullopt;
  return Code(ret ? "k.ret();" : "k.exit();");
}

// bar.sync id[, count], barrier.sync id[, count], barrier.cluster arrive/wait,
// bar.warp.sync mask, membar.level.
std::optional<Code> barrier(const ptx::Instruction& inst, OperandWriter& ops) {
  const std::string op = inst.full_opcode();
  auto args = sources(inst.operands, ops);
  if (!args) return std::nullopt;
  // The sources without their leading ", ".
  Code inner = args->text.empty() ? Code() : Code(args->text.substr(2));
  inner.values = args->values;
  if ((op == "bar.sync" || op == "barrier.sync") &&
      (inst.operands.size() == 1 || inst.operands.size() == 2)) {
    const bool aligned = op == "bar.sync";
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
  if (inst.modifiers.size() >= 3 && inst.modifiers[0] == "cluster" && inst.operands.empty()) {
    const bool arrive = inst.modifiers[1] == "arrive", aligned = inst.modifiers.back() == "aligned";
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
  if (op == "bar.warp.sync" && inst.operands.size() == 1)
    return checked(inst, ops, Code("k.bar_warp_sync(") + inner + Code(");"),
                   [&](Sandbox& b) { b.k().bar_warp_sync(b.src(inst.operands[0])); });
  static const std::map<std::string, std::pair<dsl::MembarLevel, std::string>> kMembar = {
      {"membar.cta", {dsl::MembarLevel::cta, "cta"}},
      {"membar.gl", {dsl::MembarLevel::gl, "gl"}},
      {"membar.sys", {dsl::MembarLevel::sys, "sys"}}};
  if (auto m = kMembar.find(op); m != kMembar.end() && inst.operands.empty())
    return checked(inst, ops, Code("k.membar(MembarLevel::" + m->second.second + ");"),
                   [&](Sandbox& b) { b.k().membar(m->second.first); });
  return std::nullopt;
}

}  // namespace warpforge::transpiler::wrap
