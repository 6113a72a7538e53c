// The sandbox that proves a wrapper: a kernel holding registers of the
// generated code's names and declared types, on which a candidate DSL call is
// run; the call is used only when it emits the very instruction being
// transpiled.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "transpiler/code.hpp"
#include "transpiler/operand_code.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/ptx/instruction.hpp"

namespace warpforge::transpiler::wrap {

// A kernel holding handles with the names and declared types the generated
// code's handles have, to run a candidate wrapper call on.
class Sandbox {
 public:
  explicit Sandbox(const OperandWriter& ops) : ops_(ops), k_("sandbox", ops.target()) {}

  dsl::Kernel& k() { return k_; }

  dsl::Reg reg(const ptx::Operand& op, std::optional<ptx::Type> view = std::nullopt) {
    auto it = regs_.find(op.text);
    if (it == regs_.end())
      it = regs_.emplace(op.text, k_.declare_reg(ops_.scope().find(op.text)->declared, op.text))
               .first;
    return view && *view != it->second.type() ? it->second.as(*view) : it->second;
  }
  dsl::PredUse pred(const ptx::Operand& op) {
    auto it = preds_.find(op.text);
    if (it == preds_.end()) it = preds_.emplace(op.text, k_.declare_pred(op.text)).first;
    return dsl::PredUse(it->second, op.negated);
  }
  dsl::Label label(const std::string& name) {
    dsl::Label l = k_.label_named(name);
    k_.place(l);
    return l;
  }
  // The registers of a vector operand ({%r1, %r2}), as OperandWriter::regs_vector names them.
  dsl::Regs regs(const ptx::Operand& op) {
    dsl::Regs out;
    for (const auto& e : op.elems) out.push_back(reg(e));
    return out;
  }
  // [reg + offset] or [param + offset], as OperandWriter::address names them.
  dsl::Addr addr(const ptx::Operand& op) {
    const ptx::Operand& base = op.elems.at(0);
    if (base.kind == ptx::Operand::Kind::reg) return dsl::at(reg(base), op.offset);
    return dsl::at(dsl::ParamRef{base.text}, op.offset);
  }
  // A source: a register handle or a decimal immediate (see OperandWriter).
  dsl::Src src(const ptx::Operand& op, std::optional<ptx::Type> view = std::nullopt) {
    if (op.kind == ptx::Operand::Kind::reg) return reg(op, view);
    if (op.kind == ptx::Operand::Kind::imm_float)
      return dsl::Src::immediate(
          op, op.text.compare(0, 2, "0d") == 0 ? ptx::Type::f64 : ptx::Type::f32);
    return dsl::Src(op.int_value());
  }

  // The one instruction the call emitted.
  std::optional<ptx::Instruction> emitted() const {
    ptx::Function f = k_.function();
    for (const auto& s : f.body->body)
      if (const auto* inst = std::get_if<ptx::Instruction>(&s)) return *inst;
    return std::nullopt;
  }

 private:
  const OperandWriter& ops_;
  dsl::Kernel k_;
  std::map<std::string, dsl::Reg> regs_;
  std::map<std::string, dsl::Pred> preds_;
};

// Whether `call`, run on a fresh sandbox, emits exactly `inst`.
bool reproduces(const ptx::Instruction& inst, const OperandWriter& ops,
                const std::function<void(Sandbox&)>& call);

// `call` where the sandbox shows that `run` emits exactly `inst`.
std::optional<Code> checked(const ptx::Instruction& inst, const OperandWriter& ops, Code call,
                            const std::function<void(Sandbox&)>& run);

}  // namespace warpforge::transpiler::wrap
