// Internal: the global-memory reads and the C epilogue of the block-scaled
// kernels that stage codes with plain loads (sm80, sm100a): byte loads at
// 32-bit offsets, and per pair of C's columns the bounds, the |C| fold into
// a thread's amax, and C's conversion and store for every C dtype.
#pragma once

#include "gemm_amax_problem.hpp"
#include "warpforge/dsl.hpp"

namespace warpforge::ops {

// The global address `base` + `byte_offset` (u32).
dsl::Reg global_address(dsl::Kernel& k, const dsl::Reg& base, const dsl::Reg& byte_offset);

// The byte at `base` + `byte_offset`, as u32.
dsl::Reg load_global_byte(dsl::Kernel& k, const dsl::Reg& base, const dsl::Reg& byte_offset);

// C's columns `col` and col + 1 of row `row` (`row_in`: the row is inside
// M) of batch `batch`, holding v0 and v1 (f32): each inside N folds |v| into
// thread_max (the u32 bits of the sign-cleared float, whose unsigned order
// is the order of the values, a positive NaN above +inf) and is converted
// (cvt.rn to f16/bf16, emit_minifloat_encode to FP8/FP4) and stored. An
// e2m1 C is n-major with `col` even: the two share one byte, v0 low.
void epilogue_column_pair(dsl::Kernel& k, const GemmAmaxProblem& p, const dsl::Reg& pc,
                          const dsl::Reg& batch, const dsl::Reg& row, const dsl::Pred& row_in,
                          const dsl::Reg& col, const dsl::Reg& v0, const dsl::Reg& v1,
                          dsl::Reg& thread_max);

}  // namespace warpforge::ops
