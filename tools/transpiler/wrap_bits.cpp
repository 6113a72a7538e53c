// Bit and logic operations, and the unary counts and float negation/absolute value.
#include "transpiler/wrap_families.hpp"

#include <map>

#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

// not.pred p, q and not.bN d, a.
std::optional<Code> not_(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  if (!t || inst.modifiers.size() != 1 || inst.operands.size() != 2) return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1];
  if (*t == ptx::Type::pred) {
    auto pd = ops.pred_use(d), pa = ops.pred_use(a);
    if (!pd || !pa || d.negated || a.negated) return std::nullopt;
    return checked(inst, ops, Code("k.not_(") + *pd + Code(", ") + *pa + Code(");"),
                   [&](Sandbox& b) { b.k().not_(b.pred(d).pred, b.pred(a).pred); });
  }
  auto dst = ops.reg(d, t);
  auto src = sources({a}, ops);
  if (!dst || !src) return std::nullopt;
  return checked(inst, ops, Code("k.not_(") + *dst + *src + Code(");"),
                 [&](Sandbox& b) { b.k().not_(b.reg(d, t), b.src(a)); });
}

// and/or/xor.pred d, a, b.
std::optional<Code> pred_logic(const ptx::Instruction& inst, OperandWriter& ops) {
  using Call = void (dsl::AluOps::*)(const dsl::Pred&, const dsl::Pred&, const dsl::Pred&);
  static const std::map<ptx::Opcode, Call> kCalls = {{ptx::Opcode::and_, &dsl::AluOps::and_},
                                                     {ptx::Opcode::or_, &dsl::AluOps::or_},
                                                     {ptx::Opcode::xor_, &dsl::AluOps::xor_}};
  auto call = kCalls.find(inst.opcode);
  if (call == kCalls.end() || inst.modifiers.size() != 1 || inst.operands.size() != 3)
    return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1], &c = inst.operands[2];
  auto pd = ops.pred_use(d), pa = ops.pred_use(a), pc = ops.pred_use(c);
  if (!pd || !pa || !pc || d.negated || a.negated || c.negated) return std::nullopt;
  return checked(
      inst, ops,
      Code("k." + opcode_name(inst) + "_(") + *pd + Code(", ") + *pa + Code(", ") + *pc + Code(");"),
      [&](Sandbox& b) { (b.k().*(call->second))(b.pred(d).pred, b.pred(a).pred, b.pred(c).pred); });
}

// shf.{l,r}.{clamp,wrap}.b32 d, a, b, c.
std::optional<Code> shf(const ptx::Instruction& inst, OperandWriter& ops) {
  using M = ptx::Mod;
  const auto& m = inst.modifiers;
  if (m.size() != 3 || (m[0] != M::l && m[0] != M::r) || (m[1] != M::clamp && m[1] != M::wrap) ||
      m[2] != ptx::mod(ptx::Type::b32) || inst.operands.size() != 4)
    return std::nullopt;
  const dsl::ShfDir dir = m[0] == M::l ? dsl::ShfDir::l : dsl::ShfDir::r;
  const dsl::ShfMode mode = m[1] == M::clamp ? dsl::ShfMode::clamp : dsl::ShfMode::wrap;
  const auto& d = inst.operands[0];
  std::vector<ptx::Operand> srcs(inst.operands.begin() + 1, inst.operands.end());
  auto dst = ops.reg(d);
  auto args = sources(srcs, ops);
  if (!dst || !args) return std::nullopt;
  return checked(
      inst, ops,
      Code("k.shf(ShfDir::" + std::string(ptx::name(m[0])) + ", ShfMode::" +
           std::string(ptx::name(m[1])) + ", ") +
          *dst + *args + Code(");"),
      [&](Sandbox& b) {
        b.k().shf(dir, mode, b.reg(d), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]));
      });
}

// Bit-field and byte operations on b32/u32/s32: prmt, bfe, bfi.
std::optional<Code> bitfield(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  using O = ptx::Opcode;
  const std::size_t n = inst.opcode == O::bfi ? 5 : 4;
  if (!t || inst.modifiers.size() != 1 || inst.operands.size() != n) return std::nullopt;
  const auto& d = inst.operands[0];
  std::vector<ptx::Operand> srcs(inst.operands.begin() + 1, inst.operands.end());
  auto dst = ops.reg(d, t);
  auto args = sources(srcs, ops);
  if (!dst || !args) return std::nullopt;
  return checked(
      inst, ops, Code("k." + opcode_name(inst) + "(") + *dst + *args + Code(");"), [&](Sandbox& b) {
        if (inst.opcode == O::prmt)
          b.k().prmt(b.reg(d, t), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]));
        if (inst.opcode == O::bfe)
          b.k().bfe(b.reg(d, t), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]));
        if (inst.opcode == O::bfi)
          b.k().bfi(b.reg(d, t), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]), b.src(srcs[3]));
      });
}

// Unary bit counts and float negation/absolute value: op.T d, a.
std::optional<Code> unary(const ptx::Instruction& inst, OperandWriter& ops) {
  using Call = void (dsl::BitOps::*)(const dsl::Reg&, const dsl::Src&);
  using O = ptx::Opcode;
  static const std::map<O, Call> kBits = {
      {O::popc, &dsl::BitOps::popc}, {O::clz, &dsl::BitOps::clz}, {O::brev, &dsl::BitOps::brev}};
  using ModeCall = void (dsl::AluOps::*)(const dsl::Reg&, const dsl::Src&, dsl::FloatMode);
  static const std::map<O, ModeCall> kAlu = {{O::neg, &dsl::AluOps::neg}, {O::abs, &dsl::AluOps::abs}};
  auto t = type_modifier(inst);
  if (!t || inst.operands.size() != 2) return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1];
  auto src = sources({a}, ops);
  if (!src) return std::nullopt;
  if (auto bit = kBits.find(inst.opcode); bit != kBits.end() && inst.modifiers.size() == 1) {
    // popc and clz write a u32 count from a source of type T; brev writes T.
    const bool count = inst.opcode != O::brev;
    auto dst = count ? ops.reg(d) : ops.reg(d, t);
    auto viewed = count ? src_code(a, ops, t) : src;
    if (!dst || !viewed) return std::nullopt;
    return checked(inst, ops,
                   Code("k." + opcode_name(inst) + "(") + *dst +
                       (count ? Code(", ") + *viewed : *viewed) + Code(");"),
                   [&](Sandbox& b) {
                     (b.k().*(bit->second))(count ? b.reg(d) : b.reg(d, t),
                                            count ? b.src(a, t) : b.src(a));
                   });
  }
  auto alu = kAlu.find(inst.opcode);
  auto m = modes(leading(inst, 1), false);
  auto dst = ops.reg(d, t);
  if (alu == kAlu.end() || !m || !dst) return std::nullopt;
  const dsl::FloatMode mode{m->round, m->ftz, m->sat};
  return checked(inst, ops,
                 Code("k." + opcode_name(inst) + "(") + *dst + *src +
                     Code((m->code.empty() ? "" : ", " + m->code) + ");"),
                 [&](Sandbox& b) { (b.k().*(alu->second))(b.reg(d, t), b.src(a), mode); });
}

}  // namespace warpforge::transpiler::wrap
