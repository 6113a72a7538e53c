// How a tensor core adds the products of one matrix instruction to its
// accumulator, measured on an H100. The PTX ISA states D = A·B + C without
// saying how the sum is formed, and NVIDIA documents no more; the rule below
// reproduces, bit for bit, every finite f32 result recorded on an H100 (SXM,
// driver 13000) for the forms it is used for (tests/gpu_truth, replayed by
// tests/difftest; docs/SIMULATOR.md, "Hardware rules"). It has the shape Fasi
// et al. found on earlier GPUs ("Numerical behavior of NVIDIA tensor cores",
// PeerJ CS 2021) and Khattak and Mikaitis model for the H100 (arXiv
// 2512.07004):
//  - the products are exact;
//  - `block` products and the accumulator are added in one step: each is cut
//    toward zero to a multiple of 2^(e - aligned_bits), e the largest of the
//    terms' exponents, a product's exponent being the sum of its factors'
//    (before the product's normalization, so the product may reach 2^(e+2));
//  - the exact sum of the cut terms is cut toward zero to `result_bits`
//    significand bits below its leading bit, f32's subnormal step at least.
// Measured: mma.sync m16n8k8/k16 and wgmma k16 with f16 or bf16 inputs and
// f32 accumulators: block = K, aligned_bits 25, result_bits 23 (all 1,500
// finite cases of each checked by the search, then every recorded case).
// wgmma k32 with e4m3/e5m2 inputs and f32 accumulators: block 32,
// aligned_bits 13, result_bits 13 (the FP8 accumulator of about 14 bits that
// DeepSeek-V3's report, arXiv 2412.19437 §3.3.2, describes); with f16
// accumulators the same alignment, no cut of the sum (result_bits 52), and
// the f16 result rounded to nearest even (400 of 400 cases searched, then
// every recorded case). f16 inputs into f16 accumulators (mma.sync k8/k16,
// wgmma k16, wmma): the f32 form's alignment (aligned_bits 25), no cut of
// the sum, the f16 result rounded to nearest even; summed exactly instead,
// one case in each of two recordings differed by 1 ulp (mma.sync
// m16n8k8.f16.f16.f16.f16 case 4068 at seed 20261126: 0x575c, not 0x575d;
// nvcc's wmma m8n32k16 f16 case 253: 0xdbf2, not 0xdbf1); with 25 bits every
// recorded case of those forms agrees, both seeds (with 22 to 24, or 26 to
// 28 bits, or the sum cut to f32 first, 1 to 11 cases differ). mma.sync
// m16n8k32 with e4m3/e5m2 inputs into f32: the f16/bf16 rule in two blocks
// of 16 from zero, C added afterwards (mma.cpp; every recorded case).
#pragma once

#include "program.hpp"
#include "warpforge/ptx/types.hpp"

namespace warpforge::sim {

struct TensorCoreSum {
  int block;         // products added in one step, with the accumulator
  int aligned_bits;  // bits each term keeps below the largest exponent
  int result_bits;   // significand bits below the leading bit kept after each step
};

inline constexpr TensorCoreSum kHopperHalfSum{
    16, 25, 23};  // f16/bf16 inputs (k8: block 8), f32 accumulator
inline constexpr TensorCoreSum kHopperHalfToHalfSum{
    16, 25, 52};  // f16 inputs (k8: block 8), f16 accumulator, then rounded to f16
inline constexpr TensorCoreSum kHopperFp8Sum{32, 13, 13};      // e4m3/e5m2 wgmma, f32 accumulator
inline constexpr TensorCoreSum kHopperFp8HalfSum{32, 13, 52};  // e4m3/e5m2 wgmma, f16 accumulator

// The factors of one dot product: values, their exponents (floor(log2|x|);
// for a zero, one far below every finite value's, as exponents() writes),
// and whether any is an infinity or a NaN.
struct Factors {
  const double* value;
  const int* exponent;
  bool special;
};

// c + Σ a[k]·b[k] for k < count by `rule`, each step's cut terms added
// exactly as integers (units of the step's alignment); an infinity or NaN
// among the inputs gives IEEE's sum. count <= 64.
double tensor_core_sum(double c, const Factors& a, const Factors& b, int count,
                       const TensorCoreSum& rule);

// Exponents and the special flag of `count` values of an element type whose
// smallest normal exponent is `min_exponent` (element_min_exponent), for
// Factors. A subnormal's exponent is min_exponent, as its encoding reads
// (0.m × 2^min_exponent), not floor(log2|x|): the H100 aligns a product with
// a subnormal factor by the factor's encoded exponent. Evidence: the 9 of
// 8,192 recorded cases of wgmma m64n128k32.f16.e4m3.e5m2 that the true
// exponent got wrong, each a subnormal e4m3 (2^-9 to 7·2^-9) times an e5m2
// of 2^15 or more, whose product then sets the step's alignment; with the
// encoded exponent all 5,605 finite cases of that unit agree, and every
// other recorded matrix instruction still does.
bool exponents(const double* values, int count, int min_exponent, int* out);

// The smallest normal exponent of a matrix element type (f32, tf32, bf16,
// f16, e4m3, e5m2): 1 - bias.
int element_min_exponent(ptx::Type t);

// The bits of an f32 accumulator holding `v`: a NaN is 0x7FFFFFFF, the
// canonical NaN the H100's matrix instructions write whatever NaN or
// infinities produced it (every such case recorded).
std::uint32_t accumulator_bits(double v);

}  // namespace warpforge::sim
