// Device function calls in the simulator's decoder: each function called
// gets one copy of its body per call depth, after the kernel's code, with
// registers and .param/.local frame of its own (PTX ISA 9.7.12.2 "call",
// the calling sequence nvcc writes); vprintf, the CUDA ABI's printf, is run
// by the simulator itself (printf.cpp).
#include <map>
#include <set>
#include <string>

#include "kernel_decoder.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/scopes.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;
using K = ptx::Operand::Kind;

std::string entry_label(const std::string& suffix) {
  return "$entry" + suffix;
}
std::string return_register(const std::string& suffix) {
  return "%return" + suffix;
}

// A function body as one of its copies (collect_copies): the parameters
// become the copy's; what the body declares gets the copy's suffix:
// variables, labels and scalar registers `name$f@2`, ranges `%r<45>` become
// `%r$f@2_<45>` (so `%r10` is `%r$f@2_10`).
struct CallCopy {
  const std::map<std::string, std::string>& parameters;
  std::string suffix;
  std::set<std::string> variables, registers;
  std::vector<std::pair<std::string, int>> ranges;

  void declarations(const ptx::Block& block) {
    for (const auto& s : block.body) {
      if (const auto* v = std::get_if<ptx::Variable>(&s)) {
        if (v->space != ptx::Space::reg)
          variables.insert(v->name);
        else if (v->range)
          ranges.emplace_back(v->name, *v->range);
        else
          registers.insert(v->name);
      } else if (const auto* nested = std::get_if<ptx::Block>(&s)) {
        declarations(*nested);
      }
    }
  }

  std::string register_name(const std::string& name) const {
    if (!registers.count(name))
      for (const auto& [prefix, count] : ranges)
        if (auto i = ptx::range_index(name, prefix, count))
          return prefix + suffix + "_" + std::to_string(*i);
    return name + suffix;
  }

  void rename(ptx::Operand& o) const {
    if (o.kind == K::reg) {
      o.text = register_name(o.text);
    } else if (o.kind == K::label) {
      o.text += suffix;
    } else if (o.kind == K::symbol) {
      if (auto it = parameters.find(o.text); it != parameters.end())
        o.text = it->second;
      else if (variables.count(o.text))
        o.text += suffix;
    }
    for (auto& e : o.elems) rename(e);
  }

  ptx::Block copy(const ptx::Block& block) const {
    ptx::Block out;
    for (const auto& s : block.body) {
      if (const auto* inst = std::get_if<ptx::Instruction>(&s)) {
        ptx::Instruction i = *inst;
        if (i.guard) i.guard->pred = register_name(i.guard->pred);
        for (auto& o : i.operands) rename(o);
        out.body.emplace_back(std::move(i));
      } else if (const auto* label = std::get_if<ptx::Label>(&s)) {
        out.body.emplace_back(ptx::Label{label->name + suffix});
      } else if (const auto* v = std::get_if<ptx::Variable>(&s)) {
        ptx::Variable c = *v;
        c.name = v->space == ptx::Space::reg && v->range ? v->name + suffix + "_"
                 : v->space == ptx::Space::reg           ? register_name(v->name)
                                                         : v->name + suffix;
        out.body.emplace_back(std::move(c));
      } else if (const auto* nested = std::get_if<ptx::Block>(&s)) {
        out.body.emplace_back(copy(*nested));
      } else {
        out.body.push_back(s);
      }
    }
    return out;
  }
};

}  // namespace

int KernelDecoder::body_line(std::size_t item) {
  auto it = body_lines_.find(item);
  if (it == body_lines_.end()) it = body_lines_.emplace(item, first_body_line(module_, item)).first;
  return it->second;
}

// `call[.uni] (returns), f, (arguments)` (PTX ISA 9.7.12.2) in the calling
// sequence nvcc writes: arguments and return values are .param variables
// of the caller's body. Each function has one copy of its body per call
// depth (copy_of), with registers and variables of its own, so that the
// frames of a recursion never share storage while calls at one depth share
// the code. A call copies the arguments into the copy's parameters, saves
// the return address in the copy's return register and branches; `ret`
// branches back, where the return values are copied out. vprintf, the CUDA
// ABI's printf, is executed by the simulator itself (decode_vprintf).
void KernelDecoder::collect_call(const ptx::Instruction& call) {
  std::string text = ptx::emit(call);
  if (!text.empty() && text.back() == ';') text.pop_back();
  const int line = line_;
  std::vector<ptx::Operand> returns, arguments;
  const ptx::Operand* callee = nullptr;
  for (const auto& o : call.operands) {
    if (o.kind == K::list)
      (callee ? arguments : returns) = o.elems;
    else if (!callee)
      callee = &o;
    else
      fail(line, text, "indirect calls through a .callprototype are not simulated");
  }
  if (!callee || callee->kind != K::symbol)
    fail(line, text,
         "indirect calls (through " + (callee ? ptx::to_string(*callee) : std::string("nothing")) +
             ") are not simulated; direct calls of the module's functions are");
  const std::string& name = callee->text;
  if (name == "vprintf") {
    pending_.push_back({call, line});
    return;
  }
  std::size_t item = module_.items.size();
  for (std::size_t i = 0; i < module_.items.size() && item == module_.items.size(); ++i)
    if (const auto* f = std::get_if<ptx::Function>(&module_.items[i]);
        f && f->name == name && f->body)
      item = i;
  if (item == module_.items.size())
    fail(line, text,
         "calls '" + name +
             "', which has no body in this module (an .extern function, or none); the simulator "
             "runs "
             "calls of functions the module defines, and vprintf");
  const ptx::Function& f = std::get<ptx::Function>(module_.items[item]);
  if (returns.size() != f.returns.size() || arguments.size() != f.params.size())
    fail(line, text,
         "passes " + std::to_string(arguments.size()) + " arguments and " +
             std::to_string(returns.size()) + " return values; '" + name + "' takes " +
             std::to_string(f.params.size()) + " and returns " + std::to_string(f.returns.size()));
  for (const auto& given : {&arguments, &returns})
    for (const auto& o : *given)
      if (o.kind != K::symbol || !frame_params_.count(o.text))
        fail(line, text,
             "passes " + ptx::to_string(o) +
                 "; the simulator passes .param variables of the caller's body, as nvcc does");
  const auto synthetic = [&](Synthetic kind, std::vector<ptx::Operand> operands) {
    ptx::Instruction i{.opcode = ptx::Opcode::call};
    i.guard = call.guard;
    i.operands = std::move(operands);
    pending_.push_back({std::move(i), line, kind});
  };
  if (depth_ == kMaxCallDepth) {
    synthetic(Synthetic::depth_trap, {});
    return;
  }
  const std::string suffix = copy_of(item, depth_ + 1);
  const auto copy = [&](const ptx::Variable& to, const ptx::Operand& from, bool out) {
    ptx::Operand callee_side = ptx::Operand::symbol(to.name + suffix);
    synthetic(Synthetic::frame_copy, {out ? from : callee_side, out ? callee_side : from,
                                      ptx::Operand::imm(to.size_bytes())});
  };
  for (std::size_t i = 0; i < arguments.size(); ++i) copy(f.params[i], arguments[i], false);
  synthetic(Synthetic::call,
            {ptx::Operand::label(entry_label(suffix)), ptx::Operand::reg(return_register(suffix))});
  for (std::size_t i = 0; i < returns.size(); ++i) copy(f.returns[i], returns[i], true);
}

// The suffix of the names of function `item`'s copy for call depth `depth`,
// queued for collect_copies() when new.
std::string KernelDecoder::copy_of(std::size_t item, int depth) {
  auto [it, added] = copies_.try_emplace({item, depth}, "");
  if (added) {
    it->second =
        "$" + std::get<ptx::Function>(module_.items[item]).name + "@" + std::to_string(depth);
    queued_copies_.push_back({item, depth, it->second});
  }
  return it->second;
}

// The function copies the calls need, after the kernel's code: each its
// parameters and return values (.param variables of its own), its return
// register, its entry label, its body with the copy's names, and a return
// at the end (falling off a function's end returns).
void KernelDecoder::collect_copies() {
  while (!queued_copies_.empty()) {
    const QueuedCopy q = queued_copies_.front();
    queued_copies_.erase(queued_copies_.begin());
    const ptx::Function& f = std::get<ptx::Function>(module_.items[q.item]);
    std::map<std::string, std::string> parameters;
    for (const auto* list : {&f.params, &f.returns})
      for (ptx::Variable v : *list) {
        parameters[v.name] = v.name + q.suffix;
        v.name += q.suffix;
        v.space = ptx::Space::param;
        declare(v);
      }
    add_register(return_register(q.suffix));
    std::vector<std::string> scope_problems;  // the verifier's to report
    const ptx::Block unique = ptx::with_unique_names(f, scope_problems);
    CallCopy copy{parameters, q.suffix};
    copy.declarations(unique);
    depth_ = q.depth;
    copy_return_ = ptx::Operand::reg(return_register(q.suffix));
    line_ = body_line(q.item);
    labels_[entry_label(q.suffix)] = static_cast<std::uint32_t>(pending_.size());
    collect(copy.copy(unique));
    ptx::Instruction ret{.opcode = ptx::Opcode::ret};
    ret.operands = {copy_return_};
    pending_.push_back({std::move(ret), line_, Synthetic::ret});
    // Recursion that nvcc did not turn into a loop makes a copy per depth.
    constexpr std::size_t kMaxInstructions = 1 << 20;
    if (pending_.size() > kMaxInstructions)
      fail(line_, "." + f.name,
           "the kernel with the copies of its device functions exceeds " +
               std::to_string(kMaxInstructions) + " instructions");
  }
}

// The parts of a device function call (collect_call), which have no PTX
// text of their own: messages quote the call's line.
Inst KernelDecoder::decode_synthetic(const Pending& p) {
  Inst d;
  d.line = p.line;
  d.text = "call";
  decode_guard(d, p.inst.guard);
  for (const auto& o : p.inst.operands) d.ops.push_back(operand(o, Type::u32, p.line, d.text));
  switch (p.kind) {
    case Synthetic::frame_copy:
      d.op = Op::frame_copy;
      break;
    case Synthetic::call:
      d.op = Op::call;
      d.target = static_cast<std::uint32_t>(d.op0(0).bits);
      break;
    case Synthetic::ret:
      d.op = Op::ret;
      break;
    case Synthetic::depth_trap:
      d.op = Op::trap;
      d.mode = kTrapCallDepth;
      break;
    case Synthetic::none:
      break;
  }
  return d;
}

// call[.uni] (r), vprintf, (format, arguments), which collect_call keeps:
// operands the return value's frame address (or _), then the parameters'.
Inst KernelDecoder::decode_vprintf(const ptx::Instruction& in, Inst d) {
  const int line = d.line;
  d.op = Op::vprintf;
  std::vector<ptx::Operand> returns, arguments;
  bool past_callee = false;
  for (const auto& o : in.operands) {
    if (o.kind == K::list)
      (past_callee ? arguments : returns) = o.elems;
    else
      past_callee = true;
  }
  if (arguments.size() != 2 || returns.size() > 1)
    fail(line, d.text, "vprintf takes (format, arguments) and returns at most one value");
  const auto frame_param = [&](const ptx::Operand& o) {
    if (o.kind != K::symbol || !frame_params_.count(o.text))
      fail(line, d.text,
           "passes " + ptx::to_string(o) +
               "; the simulator passes .param variables of the caller's body");
    return std::vector<Arg>{scalar(o, Type::u64, line, d.text)};
  };
  d.ops.push_back(returns.empty() ? std::vector<Arg>{Arg{}} : frame_param(returns[0]));
  for (const auto& a : arguments) d.ops.push_back(frame_param(a));
  return d;
}

}  // namespace warpforge::sim
