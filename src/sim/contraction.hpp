// ptxas's contraction of a division with the addition that follows it. The
// PTX ISA lets the code generator fuse mul and add without a rounding
// modifier into an fma (9.7.3.3 "add": "add ... without rounding modifiers
// may be optimized aggressively by the code generator", 9.7.3.5 "mul"), and
// div.full.f32 is a multiply by the reciprocal unit's 1/b (approx_functions.hpp).
// An H200 shows ptxas fusing that multiply with a following add: Triton's
// layer_norm computes rstd = 1/sqrt(var + eps), var a div.full whose one
// use is the add of eps; with the two rounded apart the simulator's rstd was
// 2 ulps from the GPU's for 6 of 48 rows (PART=tutorials scripts/gpu-triton.sh,
// tests/gpu_truth/triton/layer_norm.*), with them fused it agrees on every one.
//
// The rule, applied once to a decoded kernel: a div.full.f32 (.ftz or not)
// whose destination register the kernel names nowhere but there and in one
// add.f32 or sub.f32 without a rounding modifier (nor .sat; the same .ftz),
// later in the same block, neither predicated, makes that add an fma of the
// division's operands (ContractedDivision); the division still runs, its
// result unread. Plain mul.f32 + add.f32 pairs are not contracted here: no
// recorded kernel has one (LLVM already fuses what it may), so there is no
// evidence of what ptxas does with them.
#pragma once

#include <vector>

#include "program.hpp"

namespace warpforge::sim {

void contract_divisions(std::vector<Inst>& code);

}  // namespace warpforge::sim
