#include "contraction.hpp"

#include <unordered_map>

namespace warpforge::sim {
namespace {

bool is_f32(const Inst& in) {
  return in.ntypes == 1 && in.type() == ptx::Type::f32;
}

bool is_div_full_f32(const Inst& in) {
  return in.op == Op::div && is_f32(in) && !in.approx && in.rounding == Rounding::none && !in.guarded &&
         in.ops.size() == 3 && in.ops[0].size() == 1 && in.ops[0][0].kind == Arg::Kind::reg;
}

bool is_contractible_sum(const Inst& in, const Inst& division) {
  return (in.op == Op::add || in.op == Op::sub) && is_f32(in) && in.rounding == Rounding::none && !in.sat &&
         !in.guarded && in.ftz == division.ftz && in.ops.size() == 3;
}

bool names(const std::vector<Arg>& operand, std::uint32_t slot) {
  return operand.size() == 1 && operand[0].kind == Arg::Kind::reg && operand[0].slot == slot;
}

// Where blocks start: branch targets and the instruction after a branch or
// an instruction that leaves the straight line.
std::vector<bool> block_starts(const std::vector<Inst>& code) {
  std::vector<bool> starts(code.size() + 1, false);
  for (std::size_t i = 0; i < code.size(); ++i) {
    const Op op = code[i].op;
    if (op == Op::bra && code[i].target < starts.size()) starts[code[i].target] = true;
    if (op == Op::bra || op == Op::call || op == Op::ret || op == Op::exit || op == Op::trap) starts[i + 1] = true;
  }
  return starts;
}

}  // namespace

void contract_divisions(std::vector<Inst>& code) {
  std::unordered_map<std::uint32_t, int> named;  // register slot -> operands naming it
  for (const Inst& in : code) {
    if (in.guarded && in.guard.kind == Arg::Kind::reg) ++named[in.guard.slot];
    for (const auto& operand : in.ops)
      for (const Arg& a : operand)
        if (a.kind == Arg::Kind::reg) ++named[a.slot];
  }
  const std::vector<bool> starts = block_starts(code);
  for (std::size_t i = 0; i < code.size(); ++i) {
    const Inst& division = code[i];
    if (!is_div_full_f32(division)) continue;
    const std::uint32_t quotient = division.ops[0][0].slot;
    if (named[quotient] != 2) continue;  // its definition and one use
    for (std::size_t j = i + 1; j < code.size() && !starts[j]; ++j) {
      Inst& sum = code[j];
      const bool first = sum.ops.size() == 3 && names(sum.ops[1], quotient);
      if (!first && !(sum.ops.size() == 3 && names(sum.ops[2], quotient))) continue;
      if (is_contractible_sum(sum, division)) {
        const ContractedDivision form = sum.op == Op::add ? ContractedDivision::quotient_plus_addend
                                        : first            ? ContractedDivision::quotient_minus_addend
                                                           : ContractedDivision::addend_minus_quotient;
        sum.ops = {sum.ops[0], division.ops[1], division.ops[2], first ? sum.ops[2] : sum.ops[1]};
        sum.op = Op::fma;
        sum.mode = static_cast<std::uint8_t>(form);
      }
      break;
    }
  }
}

}  // namespace warpforge::sim
