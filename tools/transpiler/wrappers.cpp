#include "transpiler/wrappers.hpp"

#include <functional>
#include <map>

#include "transpiler/cpp_names.hpp"
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

// A source operand as a wrapper takes it (Src): register, decimal or exact
// float immediate (imm_f32 for 0f, imm_f64 for 0d).
std::optional<Code> src_code(const ptx::Operand& op, OperandWriter& ops, std::optional<ptx::Type> view) {
  if (auto r = ops.reg(op, view)) return r;
  if (auto i = ops.int_imm(op)) return i;
  return ops.float_imm(op);
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
    if (!reproduces(inst, ops, [&](Sandbox& b) { b.k().mov(b.reg(d, t), *which); })) return std::nullopt;
    return Code("k.mov(") + *dst + Code(", ") + *sr + Code(");");
  }
  // mov d, var: the address of a variable of the module.
  if (s.kind == ptx::Operand::Kind::symbol && ptx::Operand::symbol(s.text) == s) {
    if (!reproduces(inst, ops, [&](Sandbox& b) { b.k().mov(b.reg(d, t), dsl::Symbol{s.text}); }))
      return std::nullopt;
    return Code("k.mov(") + *dst + Code(", Symbol{" + cpp_string(s.text) + "});");
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
                                                                   {"min", "min"}, {"max", "max"},
                                                                   {"div", "div"}};
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
                                                          {"max", &dsl::AluOps::max}, {"div", &dsl::AluOps::div}};
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

// The addressable state spaces by modifier word, with the DSL's spelling.
const std::map<std::string, std::pair<ptx::Space, std::string>> kSpaces = {
    {"global", {ptx::Space::global, "Space::global"}}, {"shared", {ptx::Space::shared, "Space::shared"}},
    {"local", {ptx::Space::local, "Space::local"}},    {"param", {ptx::Space::param, "Space::param"}},
    {"const", {ptx::Space::const_, "Space::const_"}}};

// ld/st[.volatile][.space][.nc][.cache][.vN].type: k.ld(Space::global, f32, r[1], at(rd[2]), {.nc =
// true}).
std::optional<Code> memory(const ptx::Instruction& inst, OperandWriter& ops) {
  static const std::map<std::string, dsl::Cache> kCaches = {
      {"ca", dsl::Cache::ca}, {"cg", dsl::Cache::cg}, {"cs", dsl::Cache::cs}, {"lu", dsl::Cache::lu},
      {"cv", dsl::Cache::cv}, {"wb", dsl::Cache::wb}, {"wt", dsl::Cache::wt}};
  const bool load = inst.opcode == "ld";
  auto t = type_modifier(inst);
  if (!t || inst.operands.size() != 2) return std::nullopt;
  std::optional<std::pair<ptx::Space, std::string>> space;
  std::optional<std::string> cache;
  bool nc = false, volatile_ = false, vector = false;
  for (std::size_t i = 0; i + 1 < inst.modifiers.size(); ++i) {
    const std::string& m = inst.modifiers[i];
    if (auto s = kSpaces.find(m); s != kSpaces.end() && !space) space = s->second;
    else if (kCaches.count(m) && !cache) cache = m;
    else if (m == "nc") nc = true;
    else if (m == "volatile") volatile_ = true;
    else if (m == "v2" || m == "v4") vector = true;
    else return std::nullopt;
  }
  // No state-space word: a generic address (the -G builds reach their locals
  // through cvta.local pointers).
  if (!space) space = {ptx::Space::generic, "Space::generic"};
  const ptx::Operand &data = inst.operands[load ? 0 : 1], &where = inst.operands[load ? 1 : 0];
  // The DSL checks data registers against the storage type of sub-16-bit types.
  const ptx::Type view = ptx::bits(*t) < 16 ? ptx::storage_type(*t) : *t;
  auto address = ops.address(where);
  auto value = vector ? ops.regs_vector(data) : load ? ops.reg(data, view) : src_code(data, ops, view);
  if (!address || !value) return std::nullopt;
  std::string opts;
  if (cache) opts += ".cache = Cache::" + *cache;
  if (nc) opts += std::string(opts.empty() ? "" : ", ") + ".nc = true";
  if (volatile_) opts += std::string(opts.empty() ? "" : ", ") + ".volatile_ = true";
  if (!reproduces(inst, ops, [&](Sandbox& b) {
        const dsl::Cache c = cache ? kCaches.at(*cache) : dsl::Cache::none;
        if (load && vector) b.k().ld(space->first, *t, b.regs(data), b.addr(where), {c, nc, volatile_});
        if (load && !vector) b.k().ld(space->first, *t, b.reg(data, view), b.addr(where), {c, nc, volatile_});
        if (!load && vector) b.k().st(space->first, *t, b.addr(where), b.regs(data), {c, volatile_});
        if (!load && !vector) b.k().st(space->first, *t, b.addr(where), b.src(data, view), {c, volatile_});
      }))
    return std::nullopt;
  Code args = load ? *value + Code(", ") + *address : *address + Code(", ") + *value;
  return Code("k." + inst.opcode + "(" + space->second + ", " + dsl_type(*t) + ", ") + args +
         Code((opts.empty() ? "" : ", {" + opts + "}") + ");");
}

// The rounding and float modifiers between the opcode and its type(s):
// `.rn.ftz.sat` as FloatMode / CvtMode fields, with their C++ spelling.
struct Modes {
  dsl::Round round = dsl::Round::none;
  bool ftz = false, sat = false, satfinite = false, relu = false;
  std::string code;  // `{.round = Round::rn, .ftz = true}`, "" when all are off
};
std::optional<Modes> modes(const std::vector<std::string>& modifiers, bool cvt) {
  static const std::map<std::string, dsl::Round> kRounds = {
      {"rn", dsl::Round::rn},   {"rz", dsl::Round::rz},   {"rm", dsl::Round::rm},   {"rp", dsl::Round::rp},
      {"rna", dsl::Round::rna}, {"rni", dsl::Round::rni}, {"rzi", dsl::Round::rzi}, {"rmi", dsl::Round::rmi},
      {"rpi", dsl::Round::rpi}};
  Modes m;
  std::vector<std::string> fields;
  for (const auto& mod : modifiers) {
    if (auto r = kRounds.find(mod); r != kRounds.end() && m.round == dsl::Round::none) {
      m.round = r->second;
      fields.push_back(".round = Round::" + mod);
    } else if (mod == "ftz") {
      m.ftz = true;
    } else if (mod == "sat") {
      m.sat = true;
    } else if (cvt && mod == "satfinite") {
      m.satfinite = true;
    } else if (cvt && mod == "relu") {
      m.relu = true;
    } else {
      return std::nullopt;
    }
  }
  // Designated initializers in declaration order (FloatMode, CvtMode).
  if (m.ftz) fields.push_back(".ftz = true");
  if (m.sat) fields.push_back(".sat = true");
  if (m.satfinite) fields.push_back(".satfinite = true");
  if (m.relu) fields.push_back(".relu = true");
  for (std::size_t i = 0; i < fields.size(); ++i) m.code += (i ? ", " : "{") + fields[i];
  if (!m.code.empty()) m.code += "}";
  return m;
}

// The modifiers before the last `n` (the types).
std::vector<std::string> leading(const ptx::Instruction& inst, std::size_t n) {
  return {inst.modifiers.begin(), inst.modifiers.end() - static_cast<std::ptrdiff_t>(std::min(n, inst.modifiers.size()))};
}

// `call` where the sandbox shows that `run` emits exactly `inst`.
std::optional<Code> checked(const ptx::Instruction& inst, const OperandWriter& ops, Code call,
                            const std::function<void(Sandbox&)>& run) {
  if (!reproduces(inst, ops, run)) return std::nullopt;
  return call;
}

// Sources as wrappers take them (no view), joined after ", ".
std::optional<Code> sources(const std::vector<ptx::Operand>& srcs, OperandWriter& ops) {
  Code out;
  for (const auto& s : srcs) {
    auto c = src_code(s, ops, std::nullopt);
    if (!c) return std::nullopt;
    out += Code(", ") + *c;
  }
  return out;
}

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
  static const std::map<std::string, Call> kCalls = {
      {"and", &dsl::AluOps::and_}, {"or", &dsl::AluOps::or_}, {"xor", &dsl::AluOps::xor_}};
  auto call = kCalls.find(inst.opcode);
  if (call == kCalls.end() || inst.modifiers.size() != 1 || inst.operands.size() != 3)
    return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1], &c = inst.operands[2];
  auto pd = ops.pred_use(d), pa = ops.pred_use(a), pc = ops.pred_use(c);
  if (!pd || !pa || !pc || d.negated || a.negated || c.negated) return std::nullopt;
  return checked(
      inst, ops,
      Code("k." + inst.opcode + "_(") + *pd + Code(", ") + *pa + Code(", ") + *pc + Code(");"),
      [&](Sandbox& b) { (b.k().*(call->second))(b.pred(d).pred, b.pred(a).pred, b.pred(c).pred); });
}

// shf.{l,r}.{clamp,wrap}.b32 d, a, b, c.
std::optional<Code> shf(const ptx::Instruction& inst, OperandWriter& ops) {
  const auto& m = inst.modifiers;
  if (m.size() != 3 || (m[0] != "l" && m[0] != "r") || (m[1] != "clamp" && m[1] != "wrap") ||
      m[2] != "b32" || inst.operands.size() != 4)
    return std::nullopt;
  const dsl::ShfDir dir = m[0] == "l" ? dsl::ShfDir::l : dsl::ShfDir::r;
  const dsl::ShfMode mode = m[1] == "clamp" ? dsl::ShfMode::clamp : dsl::ShfMode::wrap;
  const auto& d = inst.operands[0];
  std::vector<ptx::Operand> srcs(inst.operands.begin() + 1, inst.operands.end());
  auto dst = ops.reg(d);
  auto args = sources(srcs, ops);
  if (!dst || !args) return std::nullopt;
  return checked(
      inst, ops,
      Code("k.shf(ShfDir::" + m[0] + ", ShfMode::" + m[1] + ", ") + *dst + *args + Code(");"),
      [&](Sandbox& b) {
        b.k().shf(dir, mode, b.reg(d), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]));
      });
}

// ex2.approx[.ftz].f32 d, a and sqrt.approx[.ftz].f32 d, a / sqrt.rnd[.ftz].T d, a.
std::optional<Code> special_function(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  if (!t || inst.operands.size() != 2 || inst.modifiers.size() < 2) return std::nullopt;
  const bool approx = inst.modifiers[0] == "approx";
  std::vector<std::string> rest(inst.modifiers.begin() + (approx ? 1 : 0),
                                inst.modifiers.end() - 1);
  auto m = modes(rest, false);
  if (!m || (approx && (m->round != dsl::Round::none || m->sat)) ||
      (inst.opcode == "ex2" && !approx))
    return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1];
  auto dst = ops.reg(d, t);
  auto src = src_code(a, ops, t);
  if (!dst || !src) return std::nullopt;
  if (inst.opcode == "ex2")
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

// cvt.rn[.satfinite].packed.f32 d, hi, lo: k.cvt_pack(packed, d, hi, lo, mode);
// cvt.rn.f16x2.fp8x2 d, a: k.cvt_unpack_fp8(fp8x2, d, a).
std::optional<Code> cvt_packed(const ptx::Instruction& inst, OperandWriter& ops) {
  auto dt = ptx::parse_type(inst.modifiers[inst.modifiers.size() - 2]), at = type_modifier(inst);
  auto m = modes(leading(inst, 2), true);
  if (!dt || !at || !m) return std::nullopt;
  const auto& d = inst.operands[0];
  auto dst = ops.reg(d);
  if (!dst) return std::nullopt;
  if (inst.operands.size() == 2) {
    const auto& a = inst.operands[1];
    auto src = ops.reg(a);
    if (*dt != ptx::Type::f16x2 || !src || m->code != "{.round = Round::rn}") return std::nullopt;
    return checked(
        inst, ops,
        Code("k.cvt_unpack_fp8(" + dsl_type(*at) + ", ") + *dst + Code(", ") + *src + Code(");"),
        [&](Sandbox& b) { b.k().cvt_unpack_fp8(*at, b.reg(d), b.reg(a)); });
  }
  const auto &hi = inst.operands[1], &lo = inst.operands[2];
  auto srcs = sources({hi, lo}, ops);
  if (!srcs) return std::nullopt;
  const dsl::CvtMode mode{m->round, m->ftz, m->sat, m->satfinite, m->relu};
  return checked(inst, ops,
                 Code("k.cvt_pack(" + dsl_type(*dt) + ", ") + *dst + *srcs +
                     Code((m->code.empty() ? "" : ", " + m->code) + ");"),
                 [&](Sandbox& b) { b.k().cvt_pack(*dt, b.reg(d), b.src(hi), b.src(lo), mode); });
}

// cvt[.modes].dtype.atype d, a: k.cvt(dtype, atype, d, a[, mode]).
std::optional<Code> cvt(const ptx::Instruction& inst, OperandWriter& ops) {
  if (inst.modifiers.size() < 2 || inst.operands.size() < 2 || inst.operands.size() > 3)
    return std::nullopt;
  if (auto packed = cvt_packed(inst, ops)) return packed;
  if (inst.operands.size() != 2) return std::nullopt;
  auto dt = ptx::parse_type(inst.modifiers[inst.modifiers.size() - 2]), at = type_modifier(inst);
  auto m = modes(leading(inst, 2), true);
  const auto &d = inst.operands[0], &a = inst.operands[1];
  auto dst = ops.reg(d);
  auto src = sources({a}, ops);
  if (!dt || !at || !m || !dst || !src) return std::nullopt;
  const dsl::CvtMode mode{m->round, m->ftz, m->sat, m->satfinite, m->relu};
  return checked(inst, ops,
                 Code("k.cvt(" + dsl_type(*dt) + ", " + dsl_type(*at) + ", ") + *dst + *src +
                     Code((m->code.empty() ? "" : ", " + m->code) + ");"),
                 [&](Sandbox& b) { b.k().cvt(*dt, *at, b.reg(d), b.src(a), mode); });
}

// cvta[.to].space.u64 d, a.
std::optional<Code> cvta(const ptx::Instruction& inst, OperandWriter& ops) {
  const bool to = !inst.modifiers.empty() && inst.modifiers[0] == "to";
  if (inst.modifiers.size() != (to ? 3u : 2u) || inst.modifiers.back() != "u64" || inst.operands.size() != 2)
    return std::nullopt;
  auto space = kSpaces.find(inst.modifiers[to ? 1 : 0]);
  const auto &d = inst.operands[0], &a = inst.operands[1];
  auto dst = ops.reg(d, ptx::Type::u64), src = ops.reg(a, ptx::Type::u64);
  if (space == kSpaces.end() || !dst || !src) return std::nullopt;
  return checked(inst, ops,
                 Code(std::string(to ? "k.cvta_to(" : "k.cvta_from(") + space->second.second + ", ") + *dst +
                     Code(", ") + *src + Code(");"),
                 [&](Sandbox& b) {
                   if (to) b.k().cvta_to(space->second.first, b.reg(d, ptx::Type::u64), b.reg(a, ptx::Type::u64));
                   else b.k().cvta_from(space->second.first, b.reg(d, ptx::Type::u64), b.reg(a, ptx::Type::u64));
                 });
}

// The integer type of twice t's width, signedness kept (mul.wide's destination).
std::optional<ptx::Type> wide(ptx::Type t) {
  static const std::map<ptx::Type, ptx::Type> kWide = {{ptx::Type::u16, ptx::Type::u32}, {ptx::Type::s16, ptx::Type::s32},
                                                       {ptx::Type::u32, ptx::Type::u64}, {ptx::Type::s32, ptx::Type::s64}};
  auto it = kWide.find(t);
  if (it == kWide.end()) return std::nullopt;
  return it->second;
}

// mul.wide.T d, a, b / mad.wide.T d, a, b, c / mad.lo.T d, a, b, c.
std::optional<Code> wide_or_lo(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  const bool mad = inst.opcode == "mad";
  if (!t || inst.modifiers.size() != 2 || inst.operands.size() != (mad ? 4u : 3u)) return std::nullopt;
  const auto& d = inst.operands[0];
  std::vector<ptx::Operand> rest(inst.operands.begin() + 2, inst.operands.end());
  auto tail = sources(rest, ops);
  if (!tail) return std::nullopt;
  const auto& a = inst.operands[1];
  if (inst.modifiers[0] == "lo" && mad) {
    auto dst = ops.reg(d, t), sa = sources({a}, ops);
    if (!dst || !sa) return std::nullopt;
    return checked(inst, ops, Code("k.mad(") + *dst + *sa + *tail + Code(");"),
                   [&](Sandbox& b) { b.k().mad(b.reg(d, t), b.src(a), b.src(rest[0]), b.src(rest[1])); });
  }
  auto w = wide(*t);
  if (inst.modifiers[0] != "wide" || !w) return std::nullopt;
  auto dst = ops.reg(d, w), ra = ops.reg(a, t);
  if (!dst || !ra) return std::nullopt;
  return checked(inst, ops, Code(mad ? "k.mad_wide(" : "k.mul_wide(") + *dst + Code(", ") + *ra + *tail + Code(");"),
                 [&](Sandbox& b) {
                   if (mad) b.k().mad_wide(b.reg(d, w), b.reg(a, t), b.src(rest[0]), b.src(rest[1]));
                   else b.k().mul_wide(b.reg(d, w), b.reg(a, t), b.src(rest[0]));
                 });
}

// selp.T d, a, b, p.
std::optional<Code> selp(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  if (!t || inst.modifiers.size() != 1 || inst.operands.size() != 4) return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1], &c = inst.operands[2], &p = inst.operands[3];
  auto dst = ops.reg(d, t);
  auto srcs = sources({a, c}, ops);
  auto sel = ops.pred_use(p);
  if (!dst || !srcs || !sel) return std::nullopt;
  return checked(inst, ops, Code("k.selp(") + *dst + *srcs + Code(", ") + *sel + Code(");"),
                 [&](Sandbox& b) { b.k().selp(b.reg(d, t), b.src(a), b.src(c), b.pred(p)); });
}

// Unary bit counts and float negation/absolute value: op.T d, a.
std::optional<Code> unary(const ptx::Instruction& inst, OperandWriter& ops) {
  using Call = void (dsl::BitOps::*)(const dsl::Reg&, const dsl::Src&);
  static const std::map<std::string, Call> kBits = {
      {"popc", &dsl::BitOps::popc}, {"clz", &dsl::BitOps::clz}, {"brev", &dsl::BitOps::brev}};
  using ModeCall = void (dsl::AluOps::*)(const dsl::Reg&, const dsl::Src&, dsl::FloatMode);
  static const std::map<std::string, ModeCall> kAlu = {{"neg", &dsl::AluOps::neg}, {"abs", &dsl::AluOps::abs}};
  auto t = type_modifier(inst);
  if (!t || inst.operands.size() != 2) return std::nullopt;
  const auto &d = inst.operands[0], &a = inst.operands[1];
  auto src = sources({a}, ops);
  if (!src) return std::nullopt;
  if (auto bit = kBits.find(inst.opcode); bit != kBits.end() && inst.modifiers.size() == 1) {
    // popc and clz write a u32 count from a source of type T; brev writes T.
    const bool count = inst.opcode != "brev";
    auto dst = count ? ops.reg(d) : ops.reg(d, t);
    auto viewed = count ? src_code(a, ops, t) : src;
    if (!dst || !viewed) return std::nullopt;
    return checked(inst, ops, Code("k." + inst.opcode + "(") + *dst + (count ? Code(", ") + *viewed : *viewed) + Code(");"),
                   [&](Sandbox& b) {
                     (b.k().*(bit->second))(count ? b.reg(d) : b.reg(d, t), count ? b.src(a, t) : b.src(a));
                   });
  }
  auto alu = kAlu.find(inst.opcode);
  auto m = modes(leading(inst, 1), false);
  auto dst = ops.reg(d, t);
  if (alu == kAlu.end() || !m || !dst) return std::nullopt;
  const dsl::FloatMode mode{m->round, m->ftz, m->sat};
  return checked(inst, ops, Code("k." + inst.opcode + "(") + *dst + *src + Code((m->code.empty() ? "" : ", " + m->code) + ");"),
                 [&](Sandbox& b) { (b.k().*(alu->second))(b.reg(d, t), b.src(a), mode); });
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
                 [&](Sandbox& b) { b.k().fma(b.reg(d, t), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]), mode); });
}

// Bit-field and byte operations on b32/u32/s32: prmt, bfe, bfi.
std::optional<Code> bitfield(const ptx::Instruction& inst, OperandWriter& ops) {
  auto t = type_modifier(inst);
  const std::size_t n = inst.opcode == "bfi" ? 5 : 4;
  if (!t || inst.modifiers.size() != 1 || inst.operands.size() != n) return std::nullopt;
  const auto& d = inst.operands[0];
  std::vector<ptx::Operand> srcs(inst.operands.begin() + 1, inst.operands.end());
  auto dst = ops.reg(d, t);
  auto args = sources(srcs, ops);
  if (!dst || !args) return std::nullopt;
  return checked(inst, ops, Code("k." + inst.opcode + "(") + *dst + *args + Code(");"), [&](Sandbox& b) {
    if (inst.opcode == "prmt") b.k().prmt(b.reg(d, t), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]));
    if (inst.opcode == "bfe") b.k().bfe(b.reg(d, t), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]));
    if (inst.opcode == "bfi") b.k().bfi(b.reg(d, t), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]), b.src(srcs[3]));
  });
}

// bar.sync id[, count], barrier.sync id[, count], bar.warp.sync mask, membar.level.
std::optional<Code> barrier(const ptx::Instruction& inst, OperandWriter& ops) {
  const std::string op = inst.full_opcode();
  auto args = sources(inst.operands, ops);
  if (!args) return std::nullopt;
  // The sources without their leading ", ".
  Code inner = args->text.empty() ? Code() : Code(args->text.substr(2));
  inner.values = args->values;
  if ((op == "bar.sync" || op == "barrier.sync") && (inst.operands.size() == 1 || inst.operands.size() == 2)) {
    const bool aligned = op == "bar.sync";
    return checked(inst, ops, Code(aligned ? "k.bar_sync(" : "k.barrier_sync(") + inner + Code(");"), [&](Sandbox& b) {
      std::optional<dsl::Src> count;
      if (inst.operands.size() == 2) count = b.src(inst.operands[1]);
      if (aligned) b.k().bar_sync(b.src(inst.operands[0]), count);
      else b.k().barrier_sync(b.src(inst.operands[0]), count);
    });
  }
  if (op == "bar.warp.sync" && inst.operands.size() == 1)
    return checked(inst, ops, Code("k.bar_warp_sync(") + inner + Code(");"),
                   [&](Sandbox& b) { b.k().bar_warp_sync(b.src(inst.operands[0])); });
  static const std::map<std::string, std::pair<dsl::MembarLevel, std::string>> kMembar = {
      {"membar.cta", {dsl::MembarLevel::cta, "cta"}}, {"membar.gl", {dsl::MembarLevel::gl, "gl"}},
      {"membar.sys", {dsl::MembarLevel::sys, "sys"}}};
  if (auto m = kMembar.find(op); m != kMembar.end() && inst.operands.empty())
    return checked(inst, ops, Code("k.membar(MembarLevel::" + m->second.second + ");"),
                   [&](Sandbox& b) { b.k().membar(m->second.first); });
  return std::nullopt;
}

// shfl.sync.mode.b32 d[|p], a, b, c, mask; vote.sync.ballot.b32 / vote.sync.{all,any,uni}.pred;
// redux.sync.op.type d, a, mask; activemask.b32.
std::optional<Code> warp(const ptx::Instruction& inst, OperandWriter& ops) {
  static const std::map<std::string, std::pair<dsl::Shfl, std::string>> kShfl = {
      {"up", {dsl::Shfl::up, "up"}}, {"down", {dsl::Shfl::down, "down"}},
      {"bfly", {dsl::Shfl::bfly, "bfly"}}, {"idx", {dsl::Shfl::idx, "idx"}}};
  static const std::map<std::string, std::pair<dsl::Vote, std::string>> kVote = {
      {"all", {dsl::Vote::all, "all"}}, {"any", {dsl::Vote::any, "any"}}, {"uni", {dsl::Vote::uni, "uni"}}};
  const auto& mods = inst.modifiers;
  if (inst.opcode == "activemask" && inst.operands.size() == 1) {
    auto dst = ops.reg(inst.operands[0]);
    if (!dst) return std::nullopt;
    return checked(inst, ops, Code("k.activemask(") + *dst + Code(");"),
                   [&](Sandbox& b) { b.k().activemask(b.reg(inst.operands[0])); });
  }
  if (inst.opcode == "shfl" && mods.size() == 3 && mods[0] == "sync" && kShfl.count(mods[1]) &&
      inst.operands.size() == 5) {
    const auto& d = inst.operands[0];
    const bool pair = d.kind == ptx::Operand::Kind::pair && d.elems.size() == 2;
    const ptx::Operand& dreg = pair ? d.elems[0] : d;
    auto dst = ops.reg(dreg);
    std::vector<ptx::Operand> srcs(inst.operands.begin() + 1, inst.operands.end());
    auto args = sources(srcs, ops);
    std::optional<Code> in_range = pair ? ops.pred_use(d.elems[1]) : std::optional<Code>(Code());
    if (!dst || !args || !in_range) return std::nullopt;
    const auto mode = kShfl.at(mods[1]);
    return checked(inst, ops,
                   Code("k.shfl_sync(Shfl::" + mode.second + ", ") + *dst + *args +
                       (pair ? Code(", ") + *in_range : Code()) + Code(");"),
                   [&](Sandbox& b) {
                     std::optional<dsl::Pred> p;
                     if (pair) p = b.pred(d.elems[1]).pred;
                     b.k().shfl_sync(mode.first, b.reg(dreg), b.src(srcs[0]), b.src(srcs[1]), b.src(srcs[2]),
                                     b.src(srcs[3]), p);
                   });
  }
  static const std::map<std::string, std::pair<dsl::Redux, std::string>> kRedux = {
      {"add", {dsl::Redux::add, "add"}}, {"min", {dsl::Redux::min, "min"}},
      {"max", {dsl::Redux::max, "max"}}, {"and", {dsl::Redux::and_, "and_"}},
      {"or", {dsl::Redux::or_, "or_"}},  {"xor", {dsl::Redux::xor_, "xor_"}}};
  if (inst.opcode == "redux" && mods.size() == 3 && mods[0] == "sync" && kRedux.count(mods[1]) &&
      inst.operands.size() == 3) {
    auto t = type_modifier(inst);
    const auto &d = inst.operands[0], &a = inst.operands[1], &mask = inst.operands[2];
    auto dst = t ? ops.reg(d, t) : std::nullopt;
    auto args = sources({a, mask}, ops);
    if (!dst || !args) return std::nullopt;
    const auto op = kRedux.at(mods[1]);
    return checked(
        inst, ops, Code("k.redux_sync(Redux::" + op.second + ", ") + *dst + *args + Code(");"),
        [&](Sandbox& b) { b.k().redux_sync(op.first, b.reg(d, t), b.src(a), b.src(mask)); });
  }
  if (inst.opcode == "vote" && mods.size() == 3 && mods[0] == "sync" && inst.operands.size() == 3) {
    const auto &d = inst.operands[0], &a = inst.operands[1], &mask = inst.operands[2];
    auto pa = ops.pred_use(a);
    auto m = sources({mask}, ops);
    if (!pa || !m) return std::nullopt;
    if (mods[1] == "ballot") {
      auto dst = ops.reg(d);
      if (!dst) return std::nullopt;
      return checked(inst, ops, Code("k.ballot_sync(") + *dst + Code(", ") + *pa + *m + Code(");"),
                     [&](Sandbox& b) { b.k().ballot_sync(b.reg(d), b.pred(a), b.src(mask)); });
    }
    auto v = kVote.find(mods[1]);
    auto pd = ops.pred_use(d);
    if (v == kVote.end() || !pd || d.negated) return std::nullopt;
    return checked(inst, ops, Code("k.vote_sync(Vote::" + v->second.second + ", ") + *pd + Code(", ") + *pa + *m + Code(");"),
                   [&](Sandbox& b) { b.k().vote_sync(v->second.first, b.pred(d).pred, b.pred(a), b.src(mask)); });
  }
  return std::nullopt;
}

// atom.space.op.type d, [a], b[, c] and red.space.op.type [a], b, in the
// default semantics and scope (the wrapper's AtomOpts left empty).
std::optional<Code> atomic(const ptx::Instruction& inst, OperandWriter& ops) {
  const bool red = inst.opcode == "red";
  auto t = type_modifier(inst);
  if (!t || inst.modifiers.size() != 3) return std::nullopt;
  auto space = kSpaces.find(inst.modifiers[0]);
  auto op = ptx::find_modifier(inst.modifiers[1], {ptx::ModifierClass::atomic_op});
  if (space == kSpaces.end() || !op) return std::nullopt;
  const auto atom_op = static_cast<ptx::AtomOp>(op->value);
  std::string op_code = "AtomOp::" + inst.modifiers[1];
  if (atom_op == ptx::AtomOp::and_ || atom_op == ptx::AtomOp::or_ || atom_op == ptx::AtomOp::xor_)
    op_code += "_";  // and, or, xor are C++ keywords
  const std::size_t first_src = red ? 1 : 2;
  if (inst.operands.size() < first_src + 1 || inst.operands.size() > first_src + 2) return std::nullopt;
  const ptx::Operand& where = inst.operands[first_src - 1];
  std::vector<ptx::Operand> srcs(inst.operands.begin() + first_src, inst.operands.end());
  auto address = ops.address(where);
  auto args = sources(srcs, ops);
  auto dst = red ? std::optional<Code>(Code()) : ops.reg(inst.operands[0], t);
  if (!address || !args || !dst) return std::nullopt;
  Code head("k." + inst.opcode + "(" + space->second.second + ", " + op_code + ", " + dsl_type(*t) + ", ");
  return checked(inst, ops, head + (red ? Code() : *dst + Code(", ")) + *address + *args + Code(");"),
                 [&](Sandbox& b) {
                   if (red) return b.k().red(space->second.first, atom_op, *t, b.addr(where), b.src(srcs[0]));
                   std::optional<dsl::Src> c;
                   if (srcs.size() == 2) c = b.src(srcs[1]);
                   b.k().atom(space->second.first, atom_op, *t, b.reg(inst.operands[0], t), b.addr(where),
                              b.src(srcs[0]), c);
                 });
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
  if (inst.opcode == "ld" || inst.opcode == "st") return memory(inst, ops);
  if (inst.opcode == "not") return not_(inst, ops);
  if (inst.modifiers.size() == 1 && inst.modifiers[0] == "pred") return pred_logic(inst, ops);
  if (inst.opcode == "shf") return shf(inst, ops);
  if (inst.opcode == "atom" || inst.opcode == "red") return atomic(inst, ops);
  if (inst.opcode == "cvt") return cvt(inst, ops);
  if (inst.opcode == "cvta") return cvta(inst, ops);
  if (inst.opcode == "selp") return selp(inst, ops);
  if (inst.opcode == "fma") return fma(inst, ops);
  if (inst.opcode == "prmt" || inst.opcode == "bfe" || inst.opcode == "bfi") return bitfield(inst, ops);
  if (inst.opcode == "popc" || inst.opcode == "clz" || inst.opcode == "brev" || inst.opcode == "neg" ||
      inst.opcode == "abs")
    return unary(inst, ops);
  if (inst.opcode == "bar" || inst.opcode == "barrier" || inst.opcode == "membar") return barrier(inst, ops);
  if (inst.opcode == "shfl" || inst.opcode == "vote" || inst.opcode == "activemask" ||
      inst.opcode == "redux")
    return warp(inst, ops);
  if (inst.opcode == "ex2" || inst.opcode == "sqrt") return special_function(inst, ops);
  if ((inst.opcode == "mul" || inst.opcode == "mad") && inst.modifiers.size() == 2 &&
      (inst.modifiers[0] == "wide" || inst.modifiers[0] == "lo"))
    if (auto w = wide_or_lo(inst, ops)) return w;
  return binary(inst, ops);
}

}  // namespace warpforge::transpiler
