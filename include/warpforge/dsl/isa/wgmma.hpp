// Warpgroup matrix multiply-accumulate, sm_90a only (PTX ISA 9.7.15
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): the four warps
// of a warpgroup (warps 4g..4g+3) together compute D(64xN) = A(64xK)·B(KxN)
// + scale_d·D, with K = 16 for bf16/f16 and K = 32 for e4m3/e5m2 (32 bytes
// of K either way). B is read from shared memory through a 64-bit matrix
// descriptor; A too, or from registers (layout/wgmma_a_fragment.hpp). D is
// held in N/2 f32 registers per thread (layout/wgmma_accumulator.hpp). The
// instructions are asynchronous: fence before the first, commit them as a
// group, wait for the group before touching D or A's registers.
#pragma once

#include <string>
#include <variant>

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

// Which dimension of an operand is contiguous in shared memory: K (A as M x K
// row-major, B as N x K row-major) or M/N (the operand transposed, "tnsp").
enum class WgmmaMajor { k, mn };

class WgmmaOps : public virtual KernelCore {
 public:
  void wgmma_fence();                  // wgmma.fence.sync.aligned
  void wgmma_commit_group();           // wgmma.commit_group.sync.aligned
  void wgmma_wait_group(int pending);  // wgmma.wait_group.sync.aligned N

  // Operand types (PTX ISA 9.7.15.5.2): bf16×bf16 or f16×f16 (m64nNk16), or
  // A and B each e4m3 or e5m2, in any pairing (m64nNk32). N = d.size() * 2
  // (8..256, a multiple of 8); d are f32. scale_d: false (or a false
  // predicate) ignores the old D (D = A·B). imm-scale-a/b are 1. The 8-bit
  // forms have no imm-trans operands: their A and B must be K-major.

  // A and B from shared memory:
  // wgmma.mma_async.sync.aligned.m64n<N>k<K>.f32.<a_type>.<b_type> {d}, desc_a, desc_b,
  //   scale_d, 1, 1[, tnsp_a, tnsp_b]   (the tnsp immediates for 16-bit types only)
  void wgmma_mma_async(Type a_type, Type b_type, const Regs& d, const Reg& desc_a, const Reg& desc_b,
                       std::variant<bool, PredUse> scale_d, WgmmaMajor a_major, WgmmaMajor b_major);
  // The same with A and B of one type.
  void wgmma_mma_async(Type ab_type, const Regs& d, const Reg& desc_a, const Reg& desc_b,
                       std::variant<bool, PredUse> scale_d, WgmmaMajor a_major, WgmmaMajor b_major);
  // A from registers: four b32 registers per thread, holding 8 bf16/f16 or
  // 16 e4m3/e5m2 elements of the warp's 16 rows (layout/wgmma_a_fragment.hpp):
  // wgmma.mma_async.sync.aligned.m64n<N>k<K>.f32.<a_type>.<b_type> {d}, {a}, desc_b,
  //   scale_d, 1, 1[, tnsp_b]             (tnsp_b for 16-bit types only)
  // The wgmma reads `a` asynchronously: leave it untouched until a
  // wgmma.wait_group retires the wgmma (PTX ISA 9.7.15.7.3).
  void wgmma_mma_async(Type a_type, Type b_type, const Regs& d, const Regs& a, const Reg& desc_b,
                       std::variant<bool, PredUse> scale_d, WgmmaMajor b_major);

  // setmaxnreg.{inc,dec}.sync.aligned.u32 count (PTX ISA 9.7.19.x): the
  // warpgroup's threads ask for (inc) or give back (dec) registers; count is a
  // multiple of 8 in 24..256.
  void setmaxnreg_inc(int count);
  void setmaxnreg_dec(int count);

 private:
  // The opcode of a wgmma.mma_async form, after the checks both A forms
  // share: target, operand types, accumulators, B's descriptor and major.
  ptx::Instruction mma_async_opcode(Type a_type, Type b_type, const Regs& d, const Reg& desc_b,
                                    WgmmaMajor b_major);
  // Refuses `major` = mn for the 8-bit types, which have no imm-trans operand.
  void require_k_major(const ptx::Instruction& opcode, Type type, WgmmaMajor major,
                       const char* operand);
  ptx::Operand scale_operand(const std::variant<bool, PredUse>& scale_d) const;
  void setmaxnreg(ptx::Mod direction, int count);  // setmaxnreg.{inc,dec}.sync.aligned.u32
};

}  // namespace warpforge::dsl
