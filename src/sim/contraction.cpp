#include "contraction.hpp"

#include <unordered_map>

namespace warpforge::sim {
namespace {

bool is_f32(const Inst& in) {
  return in.ntypes == 1 && in.type() == ptx::Type::f32;
}

// mul.f32 or div.full.f32 (.ftz or not) without a rounding modifier, writing a register.
bool is_product(const Inst& in) {
  return (in.op == Op::mul || (in.op == Op::div && !in.approx)) && is_f32(in) && in.rounding == Rounding::none &&
         !in.sat && !in.guarded && in.ops.size() == 3 && in.ops[0].size() == 1 &&
         in.ops[0][0].kind == Arg::Kind::reg;
}

bool is_sum(const Inst& in) {
  return (in.op == Op::add || in.op == Op::sub) && is_f32(in) && in.rounding == Rounding::none && !in.sat &&
         !in.guarded && in.ops.size() == 3;
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

void contract_products(std::vector<Inst>& code) {
  std::unordered_map<std::uint32_t, int> named;            // register slot -> operands naming it
  std::unordered_map<std::uint32_t, std::size_t> product;  // register slot -> the product writing it
  for (std::size_t i = 0; i < code.size(); ++i) {
    const Inst& in = code[i];
    if (in.guarded && in.guard.kind == Arg::Kind::reg) ++named[in.guard.slot];
    for (const auto& operand : in.ops)
      for (const Arg& a : operand)
        if (a.kind == Arg::Kind::reg) ++named[a.slot];
    if (is_product(in)) product[in.ops[0][0].slot] = i;
  }
  const std::vector<bool> starts = block_starts(code);
  auto reads = [](const Inst& sum, std::size_t k, std::uint32_t slot) {
    return sum.ops[k].size() == 1 && sum.ops[k][0].kind == Arg::Kind::reg && sum.ops[k][0].slot == slot;
  };
  // The products every use of which is a sum of the same .ftz later in
  // their block, each reading it once: the sums contractible with them.
  std::unordered_map<std::uint32_t, bool> fusable;
  for (const auto& [slot, at] : product) {
    int sums = 0;
    for (std::size_t j = at + 1; j < code.size() && !starts[j]; ++j)
      if (is_sum(code[j]) && code[j].ftz == code[at].ftz && reads(code[j], 1, slot) != reads(code[j], 2, slot)) ++sums;
    fusable[slot] = sums > 0 && sums == named[slot] - 1;
  }
  for (std::size_t j = 0; j < code.size(); ++j) {
    Inst& sum = code[j];
    if (!is_sum(sum)) continue;
    // The operand (1 or 2) whose product is contracted: the first that is
    // the result of a fusable product of this block.
    auto contractible = [&](std::size_t k) -> const Inst* {
      if (sum.ops[k].size() != 1 || sum.ops[k][0].kind != Arg::Kind::reg) return nullptr;
      const std::uint32_t slot = sum.ops[k][0].slot;
      const auto p = product.find(slot);
      if (p == product.end() || p->second >= j || !fusable[slot]) return nullptr;
      const Inst& in = code[p->second];
      for (std::size_t i = p->second + 1; i <= j; ++i) {
        if (starts[i]) return nullptr;
        // The fma reads the product's operands where the sum is: not where an
        // instruction between (its first operand, taken as written) changed one.
        if (i < j && !code[i].ops.empty())
          for (const Arg& w : code[i].ops[0])
            for (std::size_t f = 1; f <= 2; ++f)
              if (w.kind == Arg::Kind::reg && reads(in, f, w.slot)) return nullptr;
      }
      return &in;
    };
    std::size_t k = 1;
    const Inst* p = contractible(k);
    if (!p) p = contractible(k = 2);
    if (!p) continue;
    const ContractedSum form = sum.op == Op::add ? ContractedSum::product_plus_addend
                               : k == 1          ? ContractedSum::product_minus_addend
                                                 : ContractedSum::addend_minus_product;
    sum.mode = static_cast<std::uint8_t>(static_cast<std::uint8_t>(form) | (p->op == Op::div ? kContractedQuotient : 0));
    sum.ops = {sum.ops[0], p->ops[1], p->ops[2], sum.ops[3 - k]};
    sum.op = Op::fma;
  }
}

}  // namespace warpforge::sim
