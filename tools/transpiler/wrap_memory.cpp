// Memory: loads, stores, atomics and address-space conversion.
#include "transpiler/wrap_families.hpp"

#include <map>

#include "transpiler/cpp_names.hpp"
#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

// ld/st[.volatile][.space][.nc][.cache][.vN].type: k.ld(Space::global, f32, r[1], at(rd[2]), {.nc =
// true}).
std::optional<Code> memory(const ptx::Instruction& inst, OperandWriter& ops) {
  using M = ptx::Mod;
  static const std::map<M, dsl::Cache> kCaches = {
      {M::ca, dsl::Cache::ca}, {M::cg, dsl::Cache::cg}, {M::cs, dsl::Cache::cs},
      {M::lu, dsl::Cache::lu}, {M::cv, dsl::Cache::cv}, {M::wb, dsl::Cache::wb},
      {M::wt, dsl::Cache::wt}};
  const bool load = inst.opcode == ptx::Opcode::ld;
  auto t = type_modifier(inst);
  if (!t || inst.operands.size() != 2) return std::nullopt;
  std::optional<std::pair<ptx::Space, std::string>> space;
  std::optional<M> cache;
  bool nc = false, volatile_ = false, vector = false;
  for (std::size_t i = 0; i + 1 < inst.modifiers.size(); ++i) {
    const M m = inst.modifiers[i];
    if (auto s = kSpaces.find(m); s != kSpaces.end() && !space)
      space = s->second;
    else if (kCaches.count(m) && !cache)
      cache = m;
    else if (m == M::nc)
      nc = true;
    else if (m == M::volatile_)
      volatile_ = true;
    else if (m == M::v2 || m == M::v4)
      vector = true;
    else
      return std::nullopt;
  }
  // No state-space word: a generic address (the -G builds reach their locals
  // through cvta.local pointers).
  if (!space) space = {ptx::Space::generic, "Space::generic"};
  const ptx::Operand &data = inst.operands[load ? 0 : 1], &where = inst.operands[load ? 1 : 0];
  // The DSL checks data registers against the storage type of sub-16-bit types.
  const ptx::Type view = ptx::bits(*t) < 16 ? ptx::storage_type(*t) : *t;
  auto address = ops.address(where);
  auto value = vector ? ops.regs_vector(data)
               : load ? ops.reg(data, view)
                      : src_code(data, ops, view);
  if (!address || !value) return std::nullopt;
  std::string opts;
  if (cache) opts += ".cache = Cache::" + std::string(ptx::name(*cache));
  if (nc) opts += std::string(opts.empty() ? "" : ", ") + ".nc = true";
  if (volatile_) opts += std::string(opts.empty() ? "" : ", ") + ".volatile_ = true";
  if (!reproduces(inst, ops, [&](Sandbox& b) {
        const dsl::Cache c = cache ? kCaches.at(*cache) : dsl::Cache::none;
        if (load && vector)
          b.k().ld(space->first, *t, b.regs(data), b.addr(where), {c, nc, volatile_});
        if (load && !vector)
          b.k().ld(space->first, *t, b.reg(data, view), b.addr(where), {c, nc, volatile_});
        if (!load && vector)
          b.k().st(space->first, *t, b.addr(where), b.regs(data), {c, volatile_});
        if (!load && !vector)
          b.k().st(space->first, *t, b.addr(where), b.src(data, view), {c, volatile_});
      }))
    return std::nullopt;
  Code args = load ? *value + Code(", ") + *address : *address + Code(", ") + *value;
  return Code("k." + opcode_name(inst) + "(" + space->second + ", " + dsl_type(*t) + ", ") + args +
         Code((opts.empty() ? "" : ", {" + opts + "}") + ");");
}

// atom.space.op.type d, [a], b[, c] and red.space.op.type [a], b, in the
// default semantics and scope (the wrapper's AtomOpts left empty).
std::optional<Code> atomic(const ptx::Instruction& inst, OperandWriter& ops) {
  const bool red = inst.opcode == ptx::Opcode::red;
  auto t = type_modifier(inst);
  if (!t || inst.modifiers.size() != 3) return std::nullopt;
  auto space = kSpaces.find(inst.modifiers[0]);
  auto op = ptx::meaning(inst.modifiers[1], {ptx::ModifierClass::atomic_op});
  if (space == kSpaces.end() || !op) return std::nullopt;
  const auto atom_op = static_cast<ptx::AtomOp>(op->value);
  std::string op_code = "AtomOp::" + std::string(ptx::name(inst.modifiers[1]));
  if (atom_op == ptx::AtomOp::and_ || atom_op == ptx::AtomOp::or_ || atom_op == ptx::AtomOp::xor_)
    op_code += "_";  // and, or, xor are C++ keywords
  const std::size_t first_src = red ? 1 : 2;
  if (inst.operands.size() < first_src + 1 || inst.operands.size() > first_src + 2)
    return std::nullopt;
  const ptx::Operand& where = inst.operands[first_src - 1];
  std::vector<ptx::Operand> srcs(inst.operands.begin() + first_src, inst.operands.end());
  auto address = ops.address(where);
  auto args = sources(srcs, ops);
  auto dst = red ? std::optional<Code>(Code()) : ops.reg(inst.operands[0], t);
  if (!address || !args || !dst) return std::nullopt;
  Code head("k." + opcode_name(inst) + "(" + space->second.second + ", " + op_code + ", " + dsl_type(*t) +
            ", ");
  return checked(
      inst, ops, head + (red ? Code() : *dst + Code(", ")) + *address + *args + Code(");"),
      [&](Sandbox& b) {
        if (red) return b.k().red(space->second.first, atom_op, *t, b.addr(where), b.src(srcs[0]));
        std::optional<dsl::Src> c;
        if (srcs.size() == 2) c = b.src(srcs[1]);
        b.k().atom(space->second.first, atom_op, *t, b.reg(inst.operands[0], t), b.addr(where),
                   b.src(srcs[0]), c);
      });
}

// cvta[.to].space.u64 d, a.
std::optional<Code> cvta(const ptx::Instruction& inst, OperandWriter& ops) {
  const bool to = !inst.modifiers.empty() && inst.modifiers[0] == ptx::Mod::to;
  if (inst.modifiers.size() != (to ? 3u : 2u) || inst.modifiers.back() != ptx::mod(ptx::Type::u64) ||
      inst.operands.size() != 2)
    return std::nullopt;
  auto space = kSpaces.find(inst.modifiers[to ? 1 : 0]);
  const auto &d = inst.operands[0], &a = inst.operands[1];
  auto dst = ops.reg(d, ptx::Type::u64), src = ops.reg(a, ptx::Type::u64);
  if (space == kSpaces.end() || !dst || !src) return std::nullopt;
  return checked(
      inst, ops,
      Code(std::string(to ? "k.cvta_to(" : "k.cvta_from(") + space->second.second + ", ") + *dst +
          Code(", ") + *src + Code(");"),
      [&](Sandbox& b) {
        if (to)
          b.k().cvta_to(space->second.first, b.reg(d, ptx::Type::u64), b.reg(a, ptx::Type::u64));
        else
          b.k().cvta_from(space->second.first, b.reg(d, ptx::Type::u64), b.reg(a, ptx::Type::u64));
      });
}

}  // namespace warpforge::transpiler::wrap
