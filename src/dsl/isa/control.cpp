#include "warpforge/dsl/isa/control.hpp"

#include "warpforge/dsl/operators.hpp"

namespace warpforge::dsl {

namespace {
ptx::Instruction branch(BraOpts o) {
  ptx::Instruction inst{ptx::Opcode::bra};
  if (o.uniform) inst.modifiers.push_back(ptx::Mod::uni);
  return inst;
}
}  // namespace

void ControlOps::bra(const Label& target, BraOpts o) { emit(branch(o), {operand_of(target)}); }

void ControlOps::bra_if(const PredUse& p, const Label& target, BraOpts o) {
  ptx::Operand guard = operand_of(p);  // ownership check first: an uninitialised Pred has no name
  ptx::Instruction inst = branch(o);
  inst.operands = {operand_of(target)};
  inst.guard = ptx::Guard{guard.text, p.negated};
  emit(std::move(inst));
}

void ControlOps::ret() { emit(ptx::Instruction{ptx::Opcode::ret}); }
void ControlOps::exit() { emit(ptx::Instruction{ptx::Opcode::exit}); }

void ControlOps::if_then(const PredUse& p, const std::function<void()>& then) {
  Label end = label("endif");
  bra_if(!p, end);
  then();
  place(end);
}

void ControlOps::if_else(const PredUse& p, const std::function<void()>& then,
                         const std::function<void()>& otherwise) {
  Label other = label("else"), end = label("endif");
  bra_if(!p, other);
  then();
  bra(end);
  place(other);
  otherwise();
  place(end);
}

void ControlOps::for_range(const Src& begin, const Src& end, const Src& step,
                           const std::function<void(Reg)>& body) {
  range_loop("for_range", begin, end, step, true, body);
}

void ControlOps::for_nonempty_range(const Src& begin, const Src& end, const Src& step,
                                    const std::function<void(Reg)>& body) {
  range_loop("for_nonempty_range", begin, end, step, false, body);
}

void ControlOps::range_loop(const char* op, const Src& begin, const Src& end, const Src& step, bool test_first,
                            const std::function<void(Reg)>& body) {
  Type t = begin.is_reg() ? begin.reg().type() : end.is_reg() ? end.reg().type() : Type::u32;
  if (!ptx::is_integer(t)) fail(op, "loop bounds must be integers; got " + std::string(ptx::name(t)));
  if (!step.is_reg() && step.imm().int_value() <= 0)
    fail(op, "step " + step.imm().text + " must be positive");
  Reg i = reg(t);
  mov(i, begin);
  Label top = label("loop"), done = label("loop_end");
  if (test_first) bra_if(setp(Cmp::ge, i, end), done);
  place(top);
  body(i);
  add(i, i, step);
  Pred again = setp(Cmp::lt, i, end);
  bra_if(again, top);
  place(done);
}

void ControlOps::while_loop(const std::function<Pred()>& condition, const std::function<void()>& body) {
  Label top = label("while"), done = label("while_end");
  place(top);
  Pred go = condition();
  bra_if(!go, done);
  body();
  bra(top);
  place(done);
}

}  // namespace warpforge::dsl
