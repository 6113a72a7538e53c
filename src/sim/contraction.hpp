// ptxas's contraction of a product with the addition that follows it. The
// PTX ISA lets the code generator fuse mul and add without a rounding
// modifier into an fma (9.7.3.3 "add": "add ... without rounding modifiers
// may be optimized aggressively by the code generator", 9.7.3.5 "mul"); and
// div.full.f32 is a multiply by the reciprocal unit's 1/b
// (approx_functions.hpp), which ptxas fuses the same way. The evidence, on
// recorded GPU results that agree bit for bit only with the rule:
//  - Triton's layer_norm on an H200 (tests/gpu_truth/triton/layer_norm.*):
//    rstd = 1/sqrt(var + eps), var a div.full whose one use is the add of
//    eps; rounded apart, rstd was 2 ulps from the GPU's in 6 of 48 rows;
//  - nvcc's rotate (tests/corpus/sim_calls.cu, the difftest family nvcc, on
//    an H100): x = 0.8·px − 0.6·py is sub.f32 of two mul.f32; ptxas fuses the
//    first (an fma of 0.8·px and −(0.6·py)): 2,048 of 2,048 cases, against
//    1,571 with no contraction and 1,522 with the second fused;
//  - the difftest family triton_ptx's contraction units (H200, session 4):
//    div.full and mul with add/sub in every order, .ftz, two products, and
//    a mul read by two sums, which ptxas contracts into both (the multiply
//    repeated): 469 of that unit's 3,072 cases differ when it does not;
//    add.rn never;
//  - a product read by anything but such sums is not contracted: layer_norm's
//    mean, a div.full stored and subtracted twice, agrees only so.
//
// The rule, applied once to a decoded kernel: a mul.f32 or div.full.f32
// without a rounding modifier, not predicated, writing a register no other
// instruction writes, every reader of which is an add.f32 or sub.f32 later
// in the same block (no rounding modifier, no .sat, the same .ftz, not
// predicated, reading it once) before its operands change, makes each of
// those sums an fma of the product's operands (ContractedSum); a sum of two
// such products takes the first. The product still runs, its result unread.
#pragma once

#include <vector>

#include "program.hpp"

namespace warpforge::sim {

void contract_products(std::vector<Inst>& code);

}  // namespace warpforge::sim
