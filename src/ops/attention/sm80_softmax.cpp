#include "sm80_softmax.hpp"

#include <limits>

#include "warpforge/error.hpp"

namespace warpforge::ops::attention_sm80 {

using namespace dsl;

namespace {
const Src minus_infinity = imm_f32(-std::numeric_limits<float>::infinity());
// ex2.approx.ftz (PTX ISA 9.7.3.21): one MUFU.EX2 a score. Without .ftz,
// ptxas keeps subnormal results by scaling around it (a compare and two
// multiplies more a score: a third of the sm90a forward's instructions a
// block). A P below 2^-126 of its row's max adds nothing a row sum of at
// least 1 keeps, so flushing it changes no result beyond f32 rounding.
constexpr bool kFlushSubnormals = true;
// How far (log2 units) a block's max may exceed the running max before the
// running max moves to it (FlashAttention-4's lazy rescale): P then stays
// at most 2^8, which f32 sums and bf16/f16 P hold with their usual relative
// rounding, and O is rescaled only on a move, which after a row's first
// blocks is rare. Exact: P, the row sum and the log-sum-exp all take the
// max in force.
constexpr float kMaxLead = 8.0f;

void quad_reduce(Kernel& k, const Reg& x, bool max) {
  Reg other = k.reg(f32);
  for (int lanes : {1, 2}) {  // shfl.sync.bfly over lane bits 0 and 1 (PTX ISA 9.7.8.6)
    k.shfl_sync(Shfl::bfly, other, x, lanes, 0x1f);
    if (max) k.max(x, x, other);
    else k.add(x, x, other);
  }
}

// The maximum of the scores of row half `half` (of the thread's), in
// kChains independent chains joined at the end: the row's max is on each
// block's critical path (every exp2 waits for it), and a chain of
// dependent max.f32 as long as the row's values would add its latency
// once a value (max is exact: any order gives the same result).
Reg row_half_max(Kernel& k, const tile::RegisterTile& s, const std::vector<int>& s_half, int half) {
  constexpr std::size_t kChains = 4;
  std::vector<Reg> chains;
  std::size_t taken = 0;  // the half's values so far
  for (std::size_t v = 0; v < s_half.size(); ++v) {
    if (s_half[v] != half) continue;
    if (taken < kChains) chains.push_back(k.mov(f32, s.regs()[v]));
    else k.max(chains[taken % kChains], chains[taken % kChains], s.regs()[v]);
    ++taken;
  }
  if (chains.empty()) return k.mov(f32, minus_infinity);
  for (std::size_t stride = 1; stride < chains.size(); stride *= 2)
    for (std::size_t c = 0; c + stride < chains.size(); c += 2 * stride) k.max(chains[c], chains[c], chains[c + stride]);
  return chains[0];
}

}  // namespace

std::vector<int> row_halves(const tile::RegisterTile& t) {
  if (t.rows() != 16) throw OpsError("row_halves: " + t.describe() + " is not 16 rows tall");
  std::vector<int> halves;
  for (std::int64_t v = 0; v < t.steps().values(); ++v)
    halves.push_back(static_cast<int>(t.steps().value_offset(v).first / 8));
  return halves;
}

void quad_max(Kernel& k, const Reg& x) { quad_reduce(k, x, true); }
void quad_sum(Kernel& k, const Reg& x) { quad_reduce(k, x, false); }

OnlineSoftmax::OnlineSoftmax(Kernel& k, const Reg& scale_log2)
    : scale_log2_(scale_log2), max_(k.regs(f32, 2, "row_max")), sum_(k.regs(f32, 2, "row_sum")) {
  reset(k);
}

void OnlineSoftmax::reset(Kernel& k) {
  for (int half = 0; half < 2; ++half) {
    k.mov(max_[half], minus_infinity);
    k.mov(sum_[half], imm_f32(0.0f));
  }
}

void OnlineSoftmax::update(Kernel& k, const tile::RegisterTile& s, const std::vector<tile::RegisterTile>& o) {
  rescale(k, o, update_scores(k, s));
}

Regs OnlineSoftmax::update_scores(Kernel& k, const tile::RegisterTile& s) {
  const auto s_half = row_halves(s);
  Regs alphas = k.regs(f32, 2);
  for (int half = 0; half < 2; ++half) {
    Reg block_max = row_half_max(k, s, s_half, half);
    quad_max(k, block_max);
    // The max moves to the block's only where it leads by more than
    // kMaxLead (log2 units; always from -inf, never where both are -inf:
    // NaN compares false).
    Reg lead = k.reg(f32), offset = k.reg(f32), sum = k.reg(f32);
    k.sub(lead, block_max, max_[half]);
    k.mul(lead, lead, scale_log2_);
    Pred moves = k.setp(Cmp::gt, lead, imm_f32(kMaxLead));
    Reg new_max = k.selp(block_max, max_[half], moves);
    const Reg& alpha = alphas[half];
    k.mul(offset, new_max, scale_log2_);
    k.selp(offset, imm_f32(0.0f), offset, k.setp(Cmp::eq, new_max, minus_infinity));
    k.neg(offset, offset);
    // alpha = exp2(old max·c - new max·c) where the max moved (0 from -inf),
    // else exactly 1.
    k.fma(alpha, max_[half], scale_log2_, offset);
    k.ex2_approx(alpha, alpha, kFlushSubnormals);
    k.selp(alpha, alpha, imm_f32(1.0f), moves);
    k.mov(sum, imm_f32(0.0f));
    for (std::size_t v = 0; v < s_half.size(); ++v) {
      if (s_half[v] != half) continue;
      const Reg& x = s.regs()[v];
      k.fma(x, x, scale_log2_, offset);
      k.ex2_approx(x, x, kFlushSubnormals);
      k.add(sum, sum, x);
    }
    k.fma(sum_[half], sum_[half], alpha, sum);
    k.mov(max_[half], new_max);
  }
  return alphas;
}

void OnlineSoftmax::rescale(Kernel& k, const std::vector<tile::RegisterTile>& o, const Regs& alpha) {
  // Only where a row of the warp's moved its max (after a row's first
  // blocks, seldom): one branch for the warp (vote.sync.any, PTX ISA
  // 9.7.13.5), its rows that did not move multiplied by exactly 1.
  Pred moved = k.pred();
  k.vote_sync(Vote::any, moved, k.setp(Cmp::ne, alpha[0], imm_f32(1.0f)) || k.setp(Cmp::ne, alpha[1], imm_f32(1.0f)));
  k.if_then(moved, [&] {
    for (const auto& part : o) {
      const auto o_half = row_halves(part);
      for (std::size_t v = 0; v < o_half.size(); ++v) k.mul(part.regs()[v], part.regs()[v], alpha[o_half[v]]);
    }
  });
}

OnlineSoftmax::Result OnlineSoftmax::finish(Kernel& k) {
  Result r{k.regs(f32, 2, "inv_l"), k.regs(f32, 2, "lse_log2_")};
  finish(k, r);
  return r;
}

void OnlineSoftmax::finish(Kernel& k, const Result& r) {
  for (int half = 0; half < 2; ++half) {
    const Reg& l = sum_[half];
    quad_sum(k, l);
    Pred empty = k.setp(Cmp::eq, l, imm_f32(0.0f));
    k.rcp(r.inverse[half], l, {Round::rn});
    k.selp(r.inverse[half], imm_f32(0.0f), r.inverse[half], empty);
    Reg log_l = k.reg(f32);
    k.lg2_approx(log_l, l);
    k.fma(r.lse_log2[half], max_[half], scale_log2_, log_l);
    k.selp(r.lse_log2[half], minus_infinity, r.lse_log2[half], empty);
  }
}

}  // namespace warpforge::ops::attention_sm80
