#include "transpiler/wrap_operands.hpp"

#include <algorithm>

namespace warpforge::transpiler::wrap {

std::optional<ptx::Type> type_modifier(const ptx::Instruction& inst) {
  if (inst.modifiers.empty()) return std::nullopt;
  return ptx::type_of(inst.modifiers.back());
}

std::optional<Code> src_code(const ptx::Operand& op, OperandWriter& ops,
                             std::optional<ptx::Type> view) {
  if (auto r = ops.reg(op, view)) return r;
  if (auto i = ops.int_imm(op)) return i;
  return ops.float_imm(op);
}

std::optional<Code> sources(const std::vector<ptx::Operand>& srcs, OperandWriter& ops) {
  Code out;
  for (const auto& s : srcs) {
    auto c = src_code(s, ops, std::nullopt);
    if (!c) return std::nullopt;
    out += Code(", ") + *c;
  }
  return out;
}

const std::map<ptx::Mod, std::pair<ptx::Space, std::string>> kSpaces = {
    {ptx::Mod::global, {ptx::Space::global, "Space::global"}},
    {ptx::Mod::shared, {ptx::Space::shared, "Space::shared"}},
    {ptx::Mod::local, {ptx::Space::local, "Space::local"}},
    {ptx::Mod::param, {ptx::Space::param, "Space::param"}},
    {ptx::Mod::const_, {ptx::Space::const_, "Space::const_"}}};

std::optional<Modes> modes(const std::vector<ptx::Mod>& modifiers, bool cvt) {
  using M = ptx::Mod;
  static const std::map<M, dsl::Round> kRounds = {
      {M::rn, dsl::Round::rn},   {M::rz, dsl::Round::rz},   {M::rm, dsl::Round::rm},
      {M::rp, dsl::Round::rp},   {M::rna, dsl::Round::rna}, {M::rni, dsl::Round::rni},
      {M::rzi, dsl::Round::rzi}, {M::rmi, dsl::Round::rmi}, {M::rpi, dsl::Round::rpi}};
  Modes m;
  std::vector<std::string> fields;
  for (const M mod : modifiers) {
    if (auto r = kRounds.find(mod); r != kRounds.end() && m.round == dsl::Round::none) {
      m.round = r->second;
      fields.push_back(".round = Round::" + std::string(ptx::name(mod)));
    } else if (mod == M::ftz) {
      m.ftz = true;
    } else if (mod == M::sat) {
      m.sat = true;
    } else if (cvt && mod == M::satfinite) {
      m.satfinite = true;
    } else if (cvt && mod == M::relu) {
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

std::vector<ptx::Mod> leading(const ptx::Instruction& inst, std::size_t n) {
  return {inst.modifiers.begin(),
          inst.modifiers.end() - static_cast<std::ptrdiff_t>(std::min(n, inst.modifiers.size()))};
}

bool spelled(const ptx::Instruction& inst, ptx::Opcode opcode,
             std::initializer_list<ptx::Mod> modifiers) {
  return inst.opcode == opcode && std::ranges::equal(inst.modifiers, modifiers);
}

std::string opcode_name(const ptx::Instruction& inst) {
  return std::string(ptx::name(inst.opcode));
}

}  // namespace warpforge::transpiler::wrap
