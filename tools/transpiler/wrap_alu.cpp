// Arithmetic: moves, comparisons, two- and three-source operations, special functions.
#include "transpiler/wrap_families.hpp"

#include <map>

#include "transpiler/cpp_names.hpp"
#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

namespace {

// The integer type of twice t's width, signedness kept (mul.wide's destination).
std::optional<ptx::Type> wide(ptx::Type t) {
  static const std::map<ptx::Type, ptx::Type> kWide = {{ptx::Type::u16, ptx::Type::u32},
                                                       {ptx::Type::s16, ptx::Type::s32},
                                                       {ptx::Type::u32, ptx::Type::u64},
                                                       {ptx::Type::s32, ptx::Type::s64}};
  auto it = kWide.find(t);
  if (it == kWide.end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::optional<Code> mov(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  if (inst.modifiers.size() != 1 || !t || inst.operands.size() != 2) return std::nullopt;
  const auto &d = inst.operands[0], &s = inst.operands[1];
  if (*t == ptx::Type::pred) {
    auto pd = ops.pred_use(d), ps = ops.pred_use(s);
    if (!pd || !ps || d.negated ||
        !reproduces(inst, ops, [&](Sandbox& b) { b.k().mov(b.pred(d).pred, b.pred(s)); }))
      return std::nullopt;
    return Code("k.mov(") + *pd + Code(", ") + *ps + Code(");");
  }
  auto dst = ops.reg(d, t);
  if (!dst) return std::nullopt;
  if (auto sr = ops.sreg(s)) {
    auto which = ptx::parse_sreg(s.text);
    if (!reproduces(inst, ops, [&](Sandbox& b) { b.k().mov(b.reg(d, t), *which); }))
      return std::nullopt;
    return Code("k.mov(") + *dst + Code(", ") + *sr + Code(");");
  }
  // mov d, var: the address of a variable of the module.
  if (s.kind == ptx::Operand::Kind::symbol && ptx::Operand::symbol(s.text) == s) {
    if (!reproduces(inst, ops, [&](Sandbox& b) { b.k().mov(b.reg(d, t), dsl::Symbol{s.text}); }))
      return std::nullopt;
    return Code("k.mov(") + *dst + Code(", Symbol{" + cpp_string(s.text) + "});");
  }
  auto src = src_code(s, ops, std::nullopt);
  if (!src || !reproduces(inst, ops, [&](Sandbox& b) { b.k().mov(b.reg(d, t), b.src(s)); }))
    return std::nullopt;
  return Code("k.mov(") + *dst + Code(", ") + *src + Code(");");
}

// Two-source integer and float operations whose wrapper reads the type from the destination.
std::optional<Code> binary(const ptx::Instruction& inst, OperandWriter& ops) {
  using Call = void (dsl::AluOps::*)(const dsl::Reg&, const dsl::Src&, const dsl::Src&);
  using O = ptx::Opcode;
  static const std::map<O, std::pair<std::string, Call>> kOps = {
      {O::and_, {"and_", &dsl::AluOps::and_}},     {O::or_, {"or_", &dsl::AluOps::or_}},
      {O::xor_, {"xor_", &dsl::AluOps::xor_}},     {O::shl, {"shl", &dsl::AluOps::shl}},
      {O::shr, {"shr", &dsl::AluOps::shr}},        {O::rem, {"rem", &dsl::AluOps::rem}},
      {O::mul, {"mul_hi", &dsl::AluOps::mul_hi}},
  };
  using ModeCall =
      void (dsl::AluOps::*)(const dsl::Reg&, const dsl::Src&, const dsl::Src&, dsl::FloatMode);
  // add/sub/mul(.lo)/min/max/div take a FloatMode; the plain form is tried.
  static const std::map<O, std::pair<std::string, ModeCall>> kFloatModeOps = {
      {O::add, {"add", &dsl::AluOps::add}}, {O::sub, {"sub", &dsl::AluOps::sub}},
      {O::mul, {"mul", &dsl::AluOps::mul}}, {O::min, {"min", &dsl::AluOps::min}},
      {O::max, {"max", &dsl::AluOps::max}}, {O::div, {"div", &dsl::AluOps::div}}};
  auto t = type_modifier(inst);
  if (!t || inst.operands.size() != 3) return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1], &c = inst.operands[2];
  auto dst = ops.reg(d, t);
  auto sa = src_code(a, ops, std::nullopt), sb = src_code(c, ops, std::nullopt);
  if (!dst || !sa || !sb) return std::nullopt;
  Code args = *dst + Code(", ") + *sa + Code(", ") + *sb;
  if (auto it = kFloatModeOps.find(inst.opcode); it != kFloatModeOps.end()) {
    ModeCall call = it->second.second;
    if (reproduces(inst, ops,
                   [&](Sandbox& b) { (b.k().*call)(b.reg(d, t), b.src(a), b.src(c), {}); }))
      return Code("k." + it->second.first + "(") + args + Code(");");
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
  const auto modifier = ptx::meaning(inst.modifiers[0], {ptx::ModifierClass::comparison});
  if (!modifier) return std::nullopt;
  const auto cmp = static_cast<ptx::Cmp>(modifier->value);
  const auto &p = inst.operands[0], &a = inst.operands[1], &c = inst.operands[2];
  // The wrapper takes the type from the first register source: that one is viewed as t.
  bool a_reg = a.kind == ptx::Operand::Kind::reg;
  auto dp = ops.pred_use(p);
  auto sa = src_code(a, ops, a_reg ? t : std::nullopt),
       sb = src_code(c, ops, a_reg ? std::nullopt : t);
  if (!dp || p.negated || !sa || !sb) return std::nullopt;
  if (!reproduces(inst, ops, [&](Sandbox& b) {
        b.k().setp(b.pred(p).pred, cmp, b.src(a, a_reg ? t : std::nullopt),
                   b.src(c, a_reg ? std::nullopt : t));
      }))
    return std::nullopt;
  return Code("k.setp(") + *dp + Code(", Cmp::" + std::string(ptx::name(cmp)) + ", ") + *sa + Code(", ") +
         *sb + Code(");");
}

// mul.wide.T d, a, b / mad.wide.T d, a, b, c / mad.lo.T d, a, b, c.
std::optional<Code> wide_or_lo(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  const bool mad = inst.opcode == ptx::Opcode::mad;
  if (!t || inst.modifiers.size() != 2 || inst.operands.size() != (mad ? 4u : 3u))
    return std::nullopt;
  const auto& d = inst.operands[0];
  std::vector<ptx::Operand> rest(inst.operands.begin() + 2, inst.operands.end());
  auto tail = sources(rest, ops);
  if (!tail) return std::nullopt;
  const auto& a = inst.operands[1];
  if (inst.modifiers[0] == ptx::Mod::lo && mad) {
    auto dst = ops.reg(d, t), sa = sources({a}, ops);
    if (!dst || !sa) return std::nullopt;
    return checked(inst, ops, Code("k.mad(") + *dst + *sa + *tail + Code(");"), [&](Sandbox& b) {
      b.k().mad(b.reg(d, t), b.src(a), b.src(rest[0]), b.src(rest[1]));
    });
  }
  auto w = wide(*t);
  if (inst.modifiers[0] != ptx::Mod::wide || !w) return std::nullopt;
  auto dst = ops.reg(d, w), ra = ops.reg(a, t);
  if (!dst || !ra) return std::nullopt;
  return checked(
      inst, ops,
      Code(mad ? "k.mad_wide(" : "k.mul_wide(") + *dst + Code(", ") + *ra + *tail + Code(");"),
      [&](Sandbox& b) {
        if (mad)
          b.k().mad_wide(b.reg(d, w), b.reg(a, t), b.src(rest[0]), b.src(rest[1]));
        else
          b.k().mul_wide(b.reg(d, w), b.reg(a, t), b.src(rest[0]));
      });
}

// selp.T d, a, b, p.
std::optional<Code> selp(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  if (!t || inst.modifiers.size() != 1 || inst.operands.size() != 4) return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1], &c = inst.operands[2],
             &p = inst.operands[3];
  auto dst = ops.reg(d, t);
  auto srcs = sources({a, c}, ops);
  auto sel = ops.pred_use(p);
  if (!dst || !srcs || !sel) return std::nullopt;
  return checked(inst, ops, Code("k.selp(") + *dst + *srcs + Code(", ") + *sel + Code(");"),
                 [&](Sandbox& b) { b.k().selp(b.reg(d, t), b.src(a), b.src(c), b.pred(p)); });
}

// fma.rnd[.ftz][.sat].T d, a, b, c: the wrapper's mode is always written (its default is .rn).
std::optional<Code> fma(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  auto m = modes(leading(inst, 1), false);
  if (!t || !m || m->code.empty() || inst.operands.size() != 4) return std::nullopt;
  const auto& d = inst.operands[0];
  std::vector<ptx::Operand> srcs(inst.operands.begin() + 1, inst.operands.end());
  auto dst = ops.reg(d, t);
  auto args = sources(srcs, ops);
  if (!dst || !args) return std::nullopt;
  const dsl::FloatMode mode{m->round, m->ftz, m->sat};
  return checked(inst, ops, Code("k.fma(") + *dst + *args + Code(", " + m->code + ");"),
                 [&](Sandbox& b) {
                   b.k().fma(b.reg(d, t), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]), mode);
                 });
}

// ex2.approx[.ftz].f32 d, a and sqrt.approx[.ftz].f32 d, a / sqrt.rnd[.ftz].T d, a.
std::optional<Code> special_function(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  if (!t || inst.operands.size() != 2 || inst.modifiers.size() < 2) return std::nullopt;
  const bool approx = inst.modifiers[0] == ptx::Mod::approx;
  const bool ex2 = inst.opcode == ptx::Opcode::ex2;
  std::vector<ptx::Mod> rest(inst.modifiers.begin() + (approx ? 1 : 0), inst.modifiers.end() - 1);
  auto m = modes(rest, false);
  if (!m || (approx && (m->round != dsl::Round::none || m->sat)) || (ex2 && !approx))
    return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1];
  auto dst = ops.reg(d, t);
  auto src = src_code(a, ops, t);
  if (!dst || !src) return std::nullopt;
  if (ex2)
    return checked(
        inst, ops,
        Code("k.ex2_approx(") + *dst + Code(", ") + *src + Code(m->ftz ? ", true);" : ");"),
        [&](Sandbox& b) { b.k().ex2_approx(b.reg(d, t), b.src(a, t), m->ftz); });
  const dsl::FloatMode mode{m->round, m->ftz, m->sat};
  return checked(inst, ops,
                 Code("k.sqrt(") + *dst + Code(", ") + *src +
                     Code((m->code.empty() ? "" : ", " + m->code) + ");"),
                 [&](Sandbox& b) { b.k().sqrt(b.reg(d, t), b.src(a, t), mode); });
}

}  // namespace warpforge::transpiler::wrap
