// Storing D from a grouped kernel's f32 accumulators: one element or two
// adjacent ones of a row, inside their bounds, as D's dtype (f32, or
// rounded to the nearest bf16/f16).
#pragma once

#include "warpforge/dsl.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

// v0 and v1 at `address` and the next element of the row where in0 and
// in1 hold; with `pairs` (16-bit D whose rows keep a pair 4-byte aligned)
// both in one 32-bit store where both are inside.
void store_d_pair(dsl::Kernel& k, runtime::DType d, const dsl::Reg& address, const dsl::Reg& v0, const dsl::Reg& v1,
                  const dsl::Pred& in0, const dsl::Pred& in1, bool pairs);

// v at `address` where `in` holds.
void store_d_element(dsl::Kernel& k, runtime::DType d, const dsl::Reg& address, const dsl::Reg& v, const dsl::Pred& in);

}  // namespace warpforge::ops
