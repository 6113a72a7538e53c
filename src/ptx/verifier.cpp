#include "warpforge/ptx/verifier.hpp"

#include <map>
#include <set>

namespace warpforge::ptx {
namespace {

// The registers, labels and names visible in one function body. Scoping of
// nested blocks is flattened: a name declared anywhere in the function counts.
class FunctionScope {
 public:
  FunctionScope(const Function& f, const std::set<std::string>& module_names)
      : function_(f), module_names_(module_names) {
    for (const auto* list : {&f.params, &f.returns})
      for (const auto& v : *list) declare(v);
    collect(*f.body);
  }

  void check(std::vector<std::string>& problems) const {
    for (const auto& name : duplicate_labels_)
      problems.push_back(where() + "defines label " + name + " twice");
    check_block(*function_.body, problems);
  }

 private:
  std::string where() const { return "function " + function_.name + ": "; }

  void declare(const Variable& v) {
    if (v.space != Space::reg) return;
    if (v.range)
      ranges_[v.name] = *v.range;  // %r<N> declares %r0 .. %r(N-1), PTX ISA 5.4.1
    else
      registers_.insert(v.name);
  }

  void collect(const Block& b) {
    for (const auto& s : b.body) {
      if (const auto* v = std::get_if<Variable>(&s))
        declare(*v);
      else if (const auto* l = std::get_if<Label>(&s); l && !labels_.insert(l->name).second)
        duplicate_labels_.insert(l->name);
      else if (const auto* nested = std::get_if<Block>(&s))
        collect(*nested);
    }
  }

  bool register_declared(const std::string& name) const {
    std::string base =
        name.substr(0, name.find('.'));  // %v.x selects an element of a vector register
    if (registers_.count(base)) return true;
    std::size_t digits = base.find_last_not_of("0123456789") + 1;
    if (digits == base.size() || base.size() - digits > 9) return false;
    auto range = ranges_.find(base.substr(0, digits));
    return range != ranges_.end() && std::stoi(base.substr(digits)) < range->second;
  }

  void check_operand(const Operand& op, std::vector<std::string>& problems) const {
    if (op.kind == Operand::Kind::reg && !register_declared(op.text))
      problems.push_back(where() + "uses register " + op.text + " that is not declared");
    for (const auto& e : op.elems) check_operand(e, problems);
  }

  void check_instruction(const Instruction& inst, std::vector<std::string>& problems) const {
    if (inst.guard && !register_declared(inst.guard->pred))
      problems.push_back(where() + "guards with predicate " + inst.guard->pred +
                         " that is not declared");
    for (const auto& op : inst.operands) check_operand(op, problems);
    // PTX ISA 9.7.12.1 bra: the target is a label of this function.
    if (inst.opcode == "bra" && !inst.operands.empty() &&
        inst.operands.back().kind != Operand::Kind::label)
      problems.push_back(where() + "branches to " + to_string(inst.operands.back()) +
                         ", which is not a label here");
    // PTX ISA 9.7.12.3 call: a direct call names a function of the module.
    if (inst.opcode == "call") {
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

  const Function& function_;
  const std::set<std::string>& module_names_;
  std::set<std::string> registers_;
  std::map<std::string, int> ranges_;
  std::set<std::string> labels_;
  std::set<std::string> duplicate_labels_;
};

}  // namespace

std::vector<std::string> verify(const Module& module) {
  std::vector<std::string> problems;
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
      FunctionScope(*f, functions).check(problems);
  return problems;
}

}  // namespace warpforge::ptx
