// The MFMA instructions the DSL wraps: f32 accumulators from bf16 or f16
// inputs, 32x32x8 and 16x16x16, one block (AMD CDNA3 ISA, "Matrix Fused
// Multiply-Add (MFMA)" instruction table; LLVM IntrinsicsAMDGPU.td for the
// intrinsics). A and B are four 16-bit values per lane (<4 x i16>, 2 VGPRs),
// the accumulator 16 (32x32) or 4 (16x16) f32 per lane.
#pragma once

#include "warpforge/amdgpu/target.hpp"
#include "warpforge/amdgpu/types.hpp"

namespace warpforge::amdgpu {

enum class Mfma { f32_32x32x8_bf16, f32_16x16x16_bf16, f32_32x32x8_f16, f32_16x16x16_f16 };
inline constexpr Mfma kAllMfma[] = {Mfma::f32_32x32x8_bf16, Mfma::f32_16x16x16_bf16,
                                    Mfma::f32_32x32x8_f16, Mfma::f32_16x16x16_f16};

struct MfmaInfo {
  const char* name;  // "f32_32x32x8_bf16"
  int m, n, k;
  bool bf16;              // inputs are bf16 (else f16)
  Type accumulator;       // v16f32 or v4f32
  const char* intrinsic;  // LLVM intrinsic, without the "llvm." prefix
};

const MfmaInfo& info(Mfma m);
// The instruction's mnemonic in the target's disassembly: gfx90a spells the
// bf16 forms with the "_1k" suffix, gfx942 with an underscore before the input
// type (LLVM AMDGPU assembler syntax for GFX90A and GFX940).
std::string mnemonic(Mfma m, Target t);

}  // namespace warpforge::amdgpu
