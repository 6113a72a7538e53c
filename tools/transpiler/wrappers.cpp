#include "transpiler/wrappers.hpp"

#include <functional>
#include <map>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/modifiers.hpp"

namespace warpforge::transpiler {
namespace {

using dsl::Kernel;

// A kernel holding handles with the names and declared types the generated
// code's handles have, to run a candidate wrapper call on.
class Sandbox {
 public:
  explicit Sandbox(const OperandWriter& ops) : ops_(ops), k_("sandbox", ops.target()) {}

  Kernel& k() { return k_; }

  dsl::Reg reg(const ptx::Operand& op, std::optional<ptx::Type> view = std::nullopt) {
    auto it = regs_.find(op.text);
    if (it == regs_.end()) it = regs_.emplace(op.text, k_.declare_reg(ops_.scope().find(op.text)->declared, op.text)).first;
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
  // A source: a register handle or a decimal immediate (see OperandWriter).
  dsl::Src src(const ptx::Operand& op, std::optional<ptx::Type> view = std::nullopt) {
    if (op.kind == ptx::Operand::Kind::reg) return reg(op, view);
    if (op.kind == ptx::Operand::Kind::imm_float) return dsl::Src::immediate(op, ptx::Type::f32);
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
  Kernel k_;
  std::map<std::string, dsl::Reg> regs_;
  std::map<std::string, dsl::Pred> preds_;
};

bool reproduces(const ptx::Instruction& inst, const OperandWriter& ops, const std::function<void(Sandbox&)>& call) {
  try {
    Sandbox box(ops);
    call(box);
    return box.emitted() == inst;
  } catch (const Error&) {
    return false;  // the wrapper refused these operands: not a match
  }
}

std::optional<ptx::Type> type_modifier(const ptx::Instruction& inst) {
  if (inst.modifiers.empty()) return std::nullopt;
  return ptx::parse_type(inst.modifiers.back());
}

// A source operand as a wrapper takes it (Src): register, decimal or exact float immediate.
std::optional<Code> src_code(const ptx::Operand& op, OperandWriter& ops, std::optional<ptx::Type> view) {
  if (auto r = ops.reg(op, view)) return r;
  if (auto i = ops.int_imm(op)) return i;
  if (op.kind == ptx::Operand::Kind::imm_float && op.text.compare(0, 2, "0f") == 0) return ops.float_imm(op);
  return std::nullopt;
}

std::optional<Code> branch(const ptx::Instruction& inst, OperandWriter& ops) {
  if (inst.operands.size() != 1 || inst.modifiers.size() > 1 ||
      (inst.modifiers.size() == 1 && inst.modifiers[0] != "uni"))
    return std::nullopt;
  auto target = ops.label(inst.operands[0]);
  if (!target) return std::nullopt;
  bool uni = !inst.modifiers.empty();
  std::string opts = uni ? ", {.uniform = true}" : "";
  if (!inst.guard) {
    if (!reproduces(inst, ops, [&](Sandbox& b) { b.k().bra(b.label(inst.operands[0].text), {.uniform = uni}); }))
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

std::optional<Code> mov(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  if (inst.modifiers.size() != 1 || !t || inst.operands.size() != 2) return std::nullopt;
  const auto &d = inst.operands[0], &s = inst.operands[1];
  auto dst = ops.reg(d, t);
  if (!dst) return std::nullopt;
  if (auto sr = ops.sreg(s)) {
    auto which = ptx::parse_sreg(s.text);
    if (!reproduces(inst, ops, [&](Sandbox& b) { b.k().mov(b.reg(d, t), *which); })) return std::nullopt;
    return Code("k.mov(") + *dst + Code(", ") + *sr + Code(");");
  }
  auto src = src_code(s, ops, std::nullopt);
  if (!src || !reproduces(inst, ops, [&](Sandbox& b) { b.k().mov(b.reg(d, t), b.src(s)); })) return std::nullopt;
  return Code("k.mov(") + *dst + Code(", ") + *src + Code(");");
}

// Two-source integer and float operations whose wrapper reads the type from the destination.
std::optional<Code> binary(const ptx::Instruction& inst, OperandWriter& ops) {
  using Call = void (dsl::AluOps::*)(const dsl::Reg&, const dsl::Src&, const dsl::Src&);
  static const std::map<std::string, std::pair<std::string, Call>> kOps = {
      {"and", {"and_", &dsl::AluOps::and_}}, {"or", {"or_", &dsl::AluOps::or_}},
      {"xor", {"xor_", &dsl::AluOps::xor_}}, {"shl", {"shl", &dsl::AluOps::shl}},
      {"shr", {"shr", &dsl::AluOps::shr}},   {"rem", {"rem", &dsl::AluOps::rem}},
      {"mul", {"mul_hi", &dsl::AluOps::mul_hi}},
  };
  static const std::map<std::string, std::string> kFloatModeOps = {{"add", "add"}, {"sub", "sub"}, {"mul", "mul"},
                                                                   {"min", "min"}, {"max", "max"}};
  auto t = type_modifier(inst);
  if (!t || inst.operands.size() != 3) return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1], &c = inst.operands[2];
  auto dst = ops.reg(d, t);
  auto sa = src_code(a, ops, std::nullopt), sb = src_code(c, ops, std::nullopt);
  if (!dst || !sa || !sb) return std::nullopt;
  Code args = *dst + Code(", ") + *sa + Code(", ") + *sb;
  // add/sub/mul(.lo)/min/max take a FloatMode; the plain form is tried.
  if (auto it = kFloatModeOps.find(inst.opcode); it != kFloatModeOps.end()) {
    using ModeCall = void (dsl::AluOps::*)(const dsl::Reg&, const dsl::Src&, const dsl::Src&, dsl::FloatMode);
    static const std::map<std::string, ModeCall> kCalls = {{"add", &dsl::AluOps::add}, {"sub", &dsl::AluOps::sub},
                                                          {"mul", &dsl::AluOps::mul}, {"min", &dsl::AluOps::min},
                                                          {"max", &dsl::AluOps::max}};
    ModeCall call = kCalls.at(inst.opcode);
    if (reproduces(inst, ops, [&](Sandbox& b) { (b.k().*call)(b.reg(d, t), b.src(a), b.src(c), {}); }))
      return Code("k." + it->second + "(") + args + Code(");");
  }
  if (auto it = kOps.find(inst.opcode); it != kOps.end()) {
    Call call = it->second.second;
    if (reproduces(inst, ops, [&](Sandbox& b) { (b.k().*call)(b.reg(d, t), b.src(a), b.src(c)); }))
      return Code("k." + it->second.first + "(") + args + Code(");");
  }
  return std::nullopt;
}

std::optional<Code> setp(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  if (!t || inst.modifiers.size() != 2 || inst.operands.size() != 3) return std::nullopt;
  const auto modifier = ptx::find_modifier(inst.modifiers[0], {ptx::ModifierClass::comparison});
  if (!modifier) return std::nullopt;
  const auto cmp = static_cast<ptx::Cmp>(modifier->value);
  const auto &p = inst.operands[0], &a = inst.operands[1], &c = inst.operands[2];
  // The wrapper takes the type from the first register source: that one is viewed as t.
  bool a_reg = a.kind == ptx::Operand::Kind::reg;
  auto dp = ops.pred_use(p);
  auto sa = src_code(a, ops, a_reg ? t : std::nullopt), sb = src_code(c, ops, a_reg ? std::nullopt : t);
  if (!dp || p.negated || !sa || !sb) return std::nullopt;
  if (!reproduces(inst, ops, [&](Sandbox& b) {
        b.k().setp(b.pred(p).pred, cmp, b.src(a, a_reg ? t : std::nullopt),
                   b.src(c, a_reg ? std::nullopt : t));
      }))
    return std::nullopt;
  return Code("k.setp(") + *dp + Code(", Cmp::" + inst.modifiers[0] + ", ") + *sa + Code(", ") +
         *sb + Code(");");
}

}  // namespace

std::optional<Code> wrapper_call(const ptx::Instruction& inst, OperandWriter& ops) {
  if (inst.opcode == "bra") return branch(inst, ops);
  // The other wrappers emit unguarded instructions; guards are added around them.
  if (inst.guard) return std::nullopt;
  if (inst.opcode == "ret" || inst.opcode == "exit") {
    if (!inst.modifiers.empty() || !inst.operands.empty()) return std::nullopt;
    bool ret = inst.opcode == "ret";
    if (!reproduces(inst, ops, [&](Sandbox& b) { ret ? b.k().ret() : b.k().exit(); })) return std::nullopt;
    return Code(ret ? "k.ret();" : "k.exit();");
  }
  if (inst.opcode == "mov") return mov(inst, ops);
  if (inst.opcode == "setp") return setp(inst, ops);
  return binary(inst, ops);
}

}  // namespace warpforge::transpiler
