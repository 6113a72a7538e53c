// The online softmax of FlashAttention in a warp's registers, as the sm_80
// attention kernels (forward, decode) run it over the m16n8k16 accumulator
// layout: each thread holds two rows of the warp's 16 (lane/4 and lane/4 + 8,
// PTX ISA 9.7.14.5.14), each row spread over the four lanes of a quad.
//
// Scores are kept raw (Q·Kᵀ) and the scale is folded into exp2's argument
// with the running maximum: P = exp2(S·c - max·c), c = scale·log2(e), one
// fma and one ex2 per score. A row that has seen no key keeps max -inf and
// the offset 0, so that its masked scores give exp2(-inf) = 0, never NaN.
// The running max moves only where a block's leads it by more than 2^8 in
// P (sm80_softmax.cpp), so that O is seldom rescaled.
#pragma once

#include <vector>

#include "warpforge/dsl.hpp"
#include "warpforge/tile/register_tile.hpp"

namespace warpforge::ops::attention_sm80 {

class OnlineSoftmax {
 public:
  // The running max and sum of the thread's two rows, at -inf and 0.
  OnlineSoftmax(dsl::Kernel& k, const dsl::Reg& scale_log2);
  // Back to -inf and 0 (the next rows, in a kernel that walks several).
  void reset(dsl::Kernel& k);

  // Takes the block's scores `s` (raw, masked ones -inf) into the running
  // maximum and sum, turns `s` into P (unnormalised, in place) and rescales
  // the output accumulators `o` (rows x 16 parts) by the change of maximum
  // (where a row of the warp's moved it).
  void update(dsl::Kernel& k, const tile::RegisterTile& s, const std::vector<tile::RegisterTile>& o);
  // The same in two parts, for a kernel whose output accumulators are
  // still being written (a P·V in flight) while it turns `s` into P:
  // update_scores returns each row half's rescale factor, which rescale
  // then applies to `o`.
  dsl::Regs update_scores(dsl::Kernel& k, const tile::RegisterTile& s);
  static void rescale(dsl::Kernel& k, const std::vector<tile::RegisterTile>& o, const dsl::Regs& alpha);

  // After the last block: the row sums added over each quad, and per row
  // half 1/l (0 for a row that saw no key) and the log-sum-exp in log2
  // units (max·c + log2 l; -inf for a row that saw no key).
  struct Result {
    dsl::Regs inverse, lse_log2;
  };
  Result finish(dsl::Kernel& k);
  // The same into registers of the caller's (a kernel that finishes at several places).
  void finish(dsl::Kernel& k, const Result& into);

  const dsl::Regs& row_max() const { return max_; }

 private:
  dsl::Reg scale_log2_;
  dsl::Regs max_, sum_;
};

// Row `half` (0 or 1) of each value of an accumulator tile of 16 rows.
std::vector<int> row_halves(const tile::RegisterTile& t);

// Reduces `x` over the four lanes of each quad (the lanes of one row):
// max or add.
void quad_max(dsl::Kernel& k, const dsl::Reg& x);
void quad_sum(dsl::Kernel& k, const dsl::Reg& x);

}  // namespace warpforge::ops::attention_sm80
