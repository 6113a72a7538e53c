// The .approx instructions whose H100 results follow a rule the simulator
// models (PTX ISA 9.7.3 leaves their results to the hardware within stated
// bounds): each found from the recorded results (tests/gpu_truth/float_approx.truth,
// `warpforge-difftest differences`) and held to them by the replay. The
// evidence is beside each function (approx_functions.cpp) and in
// docs/SIMULATOR.md. The other .approx functions (rcp, sqrt, rsqrt, ex2,
// lg2, tanh of f32 and narrower) are computed in double and rounded once
// (float_ops.cpp), within a stated ulp bound of the H100's.
#pragma once

#include <cstdint>

#include "program.hpp"

namespace warpforge::sim {

// div.approx.f32 of operands already flushed for .ftz: the f32 reciprocal
// of b, flushed to zero where it is subnormal, times a, rounded to nearest.
// A subnormal b is scaled by 2^24 first, with a.
std::uint32_t div_approx_f32(std::uint32_t a, std::uint32_t b);

// div.full.f32 of operands already flushed for .ftz: div.approx.f32, with a
// and b scaled by 1/4 first where |b| > 2^126.
std::uint32_t div_full_f32(std::uint32_t a, std::uint32_t b);

// The fma ptxas makes of a product and the add.f32 or sub.f32 after it, both
// without a rounding modifier (contraction.hpp; `mode` as Inst::mode of
// ContractedSum): a·b, or div.full's a·rcp(b), added to ±c and rounded once.
std::uint32_t contracted_sum_f32(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint8_t mode);

// sin.approx.f32 and cos.approx.f32 (op is Op::sin or Op::cos) of an operand
// already flushed for .ftz: the range reduction in f32, then the function.
std::uint32_t sin_cos_approx_f32(Op op, std::uint32_t a);

// rcp, sqrt, rsqrt and ex2 .approx.f32 (op) of an operand already flushed
// for .ftz: the H100/H200's multifunction unit, from its recorded tables
// (mufu_f32.cpp).
std::uint32_t mufu_approx_f32(Op op, std::uint32_t a);

// rcp.approx.ftz.f64: 20 significand bits, the low word zero.
std::uint64_t rcp_approx_ftz_f64(std::uint64_t a);

// rsqrt.approx.f64: 1/sqrt(a) rounded to nearest.
std::uint64_t rsqrt_approx_f64(std::uint64_t a);

}  // namespace warpforge::sim
