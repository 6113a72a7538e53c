// Internal: one element of a GEMM's C (f32, f16 or bf16) read into an f32
// register, for the epilogues that add beta·C element by element (sm90a,
// sm100a).
#pragma once

#include "warpforge/dsl.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

// ld.global of C's dtype at the global address `address`, converted to f32.
dsl::Reg load_c_element(dsl::Kernel& k, runtime::DType dtype, const dsl::Reg& address);

}  // namespace warpforge::ops
