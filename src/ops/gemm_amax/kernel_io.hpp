// Internal: the global-memory reads and the C epilogue the block-scaled
// kernels that stage codes with plain loads share (sm80, sm100a): byte loads
// at 32-bit offsets, the |C| fold into a thread's amax, and C's conversion
// and store for every C dtype.
#pragma once

#include <cstdint>

#include "warpforge/dsl.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

// The global address `base` + `byte_offset` (u32).
dsl::Reg global_address(dsl::Kernel& k, const dsl::Reg& base, const dsl::Reg& byte_offset);

// The byte at `base` + `byte_offset`, as u32.
dsl::Reg load_global_byte(dsl::Kernel& k, const dsl::Reg& base, const dsl::Reg& byte_offset);

// thread_max = max(thread_max, in ? |v| : 0), on the u32 bits of the
// sign-cleared float, whose unsigned order is the order of the values (a
// positive NaN above +inf).
void fold_abs_max(dsl::Kernel& k, dsl::Reg& thread_max, const dsl::Reg& v, const dsl::Pred& in);

// Converts v (f32) to `c` (f32, f16, bf16 with cvt.rn; e4m3, e5m2 with
// emit_minifloat_encode) and stores it at element `element` of C when `in`.
void store_c_element(dsl::Kernel& k, runtime::DType c, const dsl::Reg& pc, const dsl::Reg& element,
                     const dsl::Reg& v, const dsl::Pred& in);

// Stores v0 and v1, C's elements `element` and the next along N
// (`col_stride` elements on), each when its predicate holds. An e2m1 C is
// n-major and `element` even: the two share one byte, v0 in the low nibble.
void store_c_pair(dsl::Kernel& k, runtime::DType c, const dsl::Reg& pc, const dsl::Reg& element,
                  std::int64_t col_stride, const dsl::Reg& v0, const dsl::Reg& v1,
                  const dsl::Pred& in0, const dsl::Pred& in1);

}  // namespace warpforge::ops
