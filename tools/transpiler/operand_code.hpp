// Operands as C++: arguments of DSL calls (`r[5]`, `!p[1]`, `at(rd[11], 4)`,
// `SReg::tid_x`, `16`), or expressions of type ptx::Operand where a call takes
// one. Names resolve through the Scope; what has no handle is written as an
// IR literal, so every operand has an exact spelling.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "transpiler/code.hpp"
#include "transpiler/scope.hpp"
#include "warpforge/ptx/operand.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::transpiler {

class OperandWriter {
 public:
  OperandWriter(Scope& scope, ptx::Target target) : scope_(scope), target_(target) {}

  // The argument `k.inst(...)` gets for `op`.
  Code arg(const ptx::Operand& op);
  // An expression of type ptx::Operand.
  Code expr(const ptx::Operand& op);

  // Parts wrappers need. A register handle (not a predicate), seen as `view`
  // when that differs from its declared type: `r[5].as(s32)`.
  std::optional<Code> reg(const ptx::Operand& op, std::optional<ptx::Type> view = std::nullopt) const;
  std::optional<Code> pred_use(const ptx::Operand& op) const;  // p[1] or !p[1]
  std::optional<Code> label(const ptx::Operand& op) const;
  std::optional<Code> sreg(const ptx::Operand& op) const;      // SReg::tid_x, where the target has it
  std::optional<Code> int_imm(const ptx::Operand& op) const;   // decimal immediates, as holes
  std::optional<Code> float_imm(const ptx::Operand& op) const;  // imm_f32(1.5f) where exact
  std::optional<Code> regs_vector(const ptx::Operand& op);  // Regs{r[1], r[3]} or slice(r, 1, 4)
  std::optional<Code> address(const ptx::Operand& op);      // at(rd[1], 8), at(param_0)

  bool used_slice() const { return used_slice_; }
  const std::set<std::string>& used_params() const { return used_params_; }
  ptx::Target target() const { return target_; }
  const Scope& scope() const { return scope_; }

 private:
  Code arg_if_handle(const ptx::Operand& op);  // empty text where op has no handle

  Scope& scope_;
  ptx::Target target_;
  bool used_slice_ = false;
  std::set<std::string> used_params_;
};

// A float immediate's C++ literal (`1.5f`, `0.25`), where one reproduces the
// PTX spelling exactly.
std::optional<std::string> exact_float_literal(const ptx::Operand& op);
// The DSL constant naming `t` (`u32`), or `Type::e2m1x2` for those without one.
std::string dsl_type(ptx::Type t);

}  // namespace warpforge::transpiler
