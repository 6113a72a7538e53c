// Row sums in f32 that do not overflow on the way: Σ v and Σ v² over a row
// whose values reach f32's (or bf16's) largest would overflow an f32 sum
// (3.4e38² alone does) where the result, a mean or a root mean square, is
// finite. A partial sum is held as (q, s): the sum is s · 2^(q·power), q a
// non-negative integer each thread picks from its values' largest
// magnitude (0 below 2^32, where no sum of a row of up to 2^20 values can
// overflow; else that magnitude's binade, capped at 2^126 so that 2^-q is a
// normal f32), so that every scaled value stays below 4. Scaling by a
// power of two is exact; contributions more than 2^126 times smaller than
// the largest are dropped, which is far below f32's precision.
//
// A NaN or infinity leaves q at 0, so it reaches s unscaled, as it would
// reach a plain sum (and PyTorch's).
#pragma once

#include <vector>

#include "row_kernel.hpp"
#include "warpforge/dsl/kernel.hpp"
#include "warpforge/tile/reduction.hpp"

namespace warpforge::ops::rows {

struct ScaledSum {
  dsl::Reg q;  // s32
  dsl::Reg s;  // f32
  dsl::Regs regs() const { return {q, s}; }
};

// This thread's partial Σ v^power (power 1 or 2) of value(j, e) over its
// elements (f32; elements outside the row must give 0), in two passes (the
// largest magnitude, then the sum), each calling value() again.
ScaledSum scaled_sum(const RowKernel& rk, const RowValue& value, int power);

// The row group's sums Σ value_i(j, e)^power, allreduced (the same in every
// thread of the group), as the scaled sums would give them: a plain f32 sum
// first (one pass, an add a level of the allreduce: q = 0), and only where
// one of them is not finite (a sum that overflowed, or a NaN or infinity
// among the values) again at the scale of the group's largest magnitude
// (the q the scaled sums' combination reaches: an allreduce of the largest,
// then a sum that cannot overflow). The
// allreduced sums are the same bits in every thread of a group, so the
// branch is uniform and takes the group's barriers together. Where no
// thread's values reach 2^32 the bits are those of scaled_sum's (its q is 0
// everywhere, its factors 1); where they do, the plain sum rounds where the
// scaled one would have scaled. With `interleave` (a power of two) each
// thread stands for that many threads of a shape of as many times its
// threads and 1/interleave its vectors (vector j is vector j / interleave of
// thread t + (j % interleave)·threads there): the sums are that shape's bits.
std::vector<ScaledSum> allreduced_sums(RowKernel& rk, const std::vector<RowValue>& values, int power,
                                       int interleave = 1);

// Combines partials held as (q, s) register pairs: for an allreduce of
// {q, s} (or `count` such pairs side by side).
tile::Combine combine_scaled_sums(int power, int count = 1);

// 2^q (negative: 2^-q) as an f32 register, for 0 <= q <= 126.
dsl::Reg power_of_two(dsl::Kernel& k, const dsl::Reg& q, bool negative);

// v / n rounded to nearest (div.rn, PTX ISA 9.7.3.8; f32 v): where n is a
// power of two, a multiply by 1/n instead, which gives the same bits (both
// round the same exact quotient) in one instruction, not div.rn's dozen.
dsl::Reg divided_by(dsl::Kernel& k, const dsl::Reg& v, std::int64_t n);

// The sum's value divided by `n` as an f32 (s / n · 2^(q·power), rounded;
// infinite where it exceeds f32's range): divided_by's multiply where n is a
// power of two, unless `always_divide` (div.rn: the same bits; the forward
// norms keep it, with which ptxas holds their rows in 64 registers without
// spilling at n 2048 and 32768, where the multiply spills 4-8 bytes).
dsl::Reg scaled_mean(dsl::Kernel& k, const ScaledSum& sum, int power, std::int64_t n, bool always_divide = false);

}  // namespace warpforge::ops::rows
