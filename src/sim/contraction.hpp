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
//    1,571 with no contraction and 1,522 with the second fused.
//
// The rule, applied once to a decoded kernel: an add.f32 or sub.f32 without
// a rounding modifier (nor .sat), not predicated, one of whose operands is a
// register written only by a mul.f32 or div.full.f32 without a rounding
// modifier (same .ftz, not predicated) earlier in the same block and named
// nowhere else, becomes an fma of that product's operands (ContractedSum);
// where both operands are such products, the first. The product still runs,
// its result unread.
#pragma once

#include <vector>

#include "program.hpp"

namespace warpforge::sim {

void contract_products(std::vector<Inst>& code);

}  // namespace warpforge::sim
