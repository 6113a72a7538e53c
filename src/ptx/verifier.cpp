#include "warpforge/ptx/verifier.hpp"

#include <set>

#include "isa_checks.hpp"
#include "warpforge/ptx/scopes.hpp"

namespace warpforge::ptx {
namespace {

// The checks of one function body beyond its scoping (scopes.hpp): branch
// targets and direct calls, then those against the ISA (isa_checks.hpp).
class FunctionChecks {
 public:
  FunctionChecks(const Module& m, const Function& f, const std::set<std::string>& module_names)
      : module_(m), function_(f), module_names_(module_names) {}

  void check(std::vector<std::string>& problems) const {
    const Block unique = with_unique_names(function_, problems);
    check_block(*function_.body, problems);
    check_instructions(module_, function_, unique, problems);
  }

 private:
  std::string where() const { return "function " + function_.name + ": "; }

  void check_instruction(const Instruction& inst, std::vector<std::string>& problems) const {
    // PTX ISA 9.7.12.1 bra: the target is a label of this function.
    if (inst.opcode == Opcode::bra && !inst.operands.empty() &&
        inst.operands.back().kind != Operand::Kind::label)
      problems.push_back(where() + "branches to " + to_string(inst.operands.back()) +
                         ", which is not a label here");
    // PTX ISA 9.7.12.3 call: a direct call names a function of the module.
    if (inst.opcode == Opcode::call) {
      for (const auto& op : inst.operands) {
        if (op.kind == Operand::Kind::list) continue;
        if (op.kind == Operand::Kind::symbol && !module_names_.count(op.text))
          problems.push_back(where() + "calls " + op.text +
                             ", which the module neither defines nor declares");
        break;
      }
    }
  }

  void check_block(const Block& b, std::vector<std::string>& problems) const {
    for (const auto& s : b.body) {
      if (const auto* inst = std::get_if<Instruction>(&s))
        check_instruction(*inst, problems);
      else if (const auto* nested = std::get_if<Block>(&s))
        check_block(*nested, problems);
    }
  }

  const Module& module_;
  const Function& function_;
  const std::set<std::string>& module_names_;
};

}  // namespace

std::vector<std::string> verify(const Module& module) {
  std::vector<std::string> problems;
  check_header(module, problems);
  std::set<std::string> functions, defined, variables;
  for (const auto& item : module.items) {
    if (const auto* f = std::get_if<Function>(&item)) {
      functions.insert(f->name);
      if (f->body && !defined.insert(f->name).second)
        problems.push_back("function " + f->name + " is defined twice");
      if (f->is_entry && !f->returns.empty())
        problems.push_back("entry " + f->name + " has return values");
    } else if (const auto* v = std::get_if<Variable>(&item)) {
      if (!variables.insert(v->name).second && v->linkage != Linkage::extern_)
        problems.push_back("module variable " + v->name + " is declared twice");
    }
  }
  for (const auto& item : module.items)
    if (const auto* f = std::get_if<Function>(&item); f && f->body)
      FunctionChecks(module, *f, functions).check(problems);
  return problems;
}

}  // namespace warpforge::ptx
