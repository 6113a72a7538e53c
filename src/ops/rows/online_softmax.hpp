// A row's softmax statistics in one pass over its values, combinable across
// threads (the online softmax: Milakov and Gimelshein, "Online normalizer
// calculation for softmax", 2018): (m, s) with m the largest value and
// s = Σ exp(v - m). Two partials combine as M = max(m1, m2),
// s = s1·exp(m1 - M) + s2·exp(m2 - M), so one reduction gives both the
// maximum and the sum (softmax, cross-entropy's logsumexp = m + log s).
//
// Exponentials are ex2.approx.f32((v - m)·log2 e) (PTX ISA 9.7.3.21: about
// 2 ulp, subnormal results kept); v - m is formed first, so the rounding of
// the product is relative to the difference, not to v.
//
// PyTorch's rules for special values hold: a NaN in the row makes s NaN
// (max.f32 passes over it, but exp(NaN - m) is NaN); +inf makes m infinite and
// exp(inf - inf) NaN; a row of -inf gives m = -inf and s = 0 (its softmax 0/0,
// NaN). A part of a row that is all -inf (vectors past its end) adds nothing.
#pragma once

#include <vector>

#include "row_kernel.hpp"
#include "warpforge/dsl/kernel.hpp"
#include "warpforge/tile/reduction.hpp"

namespace warpforge::ops::rows {

struct OnlineSoftmax {
  dsl::Reg max;  // f32
  dsl::Reg sum;  // f32
  dsl::Regs regs() const { return {max, sum}; }
};

// This thread's partial over value(j, e) (f32; -inf outside the row), in two
// passes (the max, then the sum), each calling value() again.
OnlineSoftmax online_softmax(const RowKernel& rk, const RowValue& value);
// Combines partials held as (max, sum) register pairs.
tile::Combine combine_online_softmax();
// The max to subtract: m, or 0 where m is -inf (so that exp(-inf - 0) = 0, not NaN).
dsl::Reg safe_max(dsl::Kernel& k, const dsl::Reg& max);
// exp(v - shift), shift from safe_max(); 0 where it is below the f32 normals.
dsl::Reg exp_shifted(dsl::Kernel& k, const dsl::Reg& v, const dsl::Reg& shift);

}  // namespace warpforge::ops::rows
