// Warp-wide operations.
#include "transpiler/wrap_families.hpp"

#include <map>

#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

// shfl.sync.mode.b32 d[|p], a, b, c, mask; vote.sync.ballot.b32 / vote.sync.{all,any,uni}.pred;
// redux.sync.op.type d, a, mask; activemask.b32.
std::optional<Code> warp(const ptx::Instruction& inst, OperandWriter& ops) {
  using M = ptx::Mod;
  using O = ptx::Opcode;
  static const std::map<M, std::pair<dsl::Shfl, std::string>> kShfl = {
      {M::up, {dsl::Shfl::up, "up"}},
      {M::down, {dsl::Shfl::down, "down"}},
      {M::bfly, {dsl::Shfl::bfly, "bfly"}},
      {M::idx, {dsl::Shfl::idx, "idx"}}};
  static const std::map<M, std::pair<dsl::Vote, std::string>> kVote = {
      {M::all, {dsl::Vote::all, "all"}},
      {M::any, {dsl::Vote::any, "any"}},
      {M::uni, {dsl::Vote::uni, "uni"}}};
  const auto& mods = inst.modifiers;
  if (inst.opcode == O::activemask && inst.operands.size() == 1) {
    auto dst = ops.reg(inst.operands[0]);
    if (!dst) return std::nullopt;
    return checked(inst, ops, Code("k.activemask(") + *dst + Code(");"),
                   [&](Sandbox& b) { b.k().activemask(b.reg(inst.operands[0])); });
  }
  if (inst.opcode == O::shfl && mods.size() == 3 && mods[0] == M::sync && kShfl.count(mods[1]) &&
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
                     b.k().shfl_sync(mode.first, b.reg(dreg), b.src(srcs[0]), b.src(srcs[1]),
                                     b.src(srcs[2]), b.src(srcs[3]), p);
                   });
  }
  static const std::map<M, std::pair<dsl::Redux, std::string>> kRedux = {
      {M::add, {dsl::Redux::add, "add"}}, {M::min, {dsl::Redux::min, "min"}},
      {M::max, {dsl::Redux::max, "max"}}, {M::and_, {dsl::Redux::and_, "and_"}},
      {M::or_, {dsl::Redux::or_, "or_"}}, {M::xor_, {dsl::Redux::xor_, "xor_"}}};
  if (inst.opcode == O::redux && mods.size() == 3 && mods[0] == M::sync && kRedux.count(mods[1]) &&
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
  if (inst.opcode == O::vote && mods.size() == 3 && mods[0] == M::sync && inst.operands.size() == 3) {
    const auto &d = inst.operands[0], &a = inst.operands[1], &mask = inst.operands[2];
    auto pa = ops.pred_use(a);
    auto m = sources({mask}, ops);
    if (!pa || !m) return std::nullopt;
    if (mods[1] == M::ballot) {
      auto dst = ops.reg(d);
      if (!dst) return std::nullopt;
      return checked(inst, ops, Code("k.ballot_sync(") + *dst + Code(", ") + *pa + *m + Code(");"),
                     [&](Sandbox& b) { b.k().ballot_sync(b.reg(d), b.pred(a), b.src(mask)); });
    }
    auto v = kVote.find(mods[1]);
    auto pd = ops.pred_use(d);
    if (v == kVote.end() || !pd || d.negated) return std::nullopt;
    return checked(inst, ops,
                   Code("k.vote_sync(Vote::" + v->second.second + ", ") + *pd + Code(", ") + *pa +
                       *m + Code(");"),
                   [&](Sandbox& b) {
                     b.k().vote_sync(v->second.first, b.pred(d).pred, b.pred(a), b.src(mask));
                   });
  }
  return std::nullopt;
}

}  // namespace warpforge::transpiler::wrap
