// Warpgroup matrix multiply-accumulate, sm_90a only (PTX ISA 9.7.15
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): the four warps
// of a warpgroup (warps 4g..4g+3) together compute D(64xN) = A(64x16)·B(16xN)
// + scale_d·D, A and B read from shared memory through 64-bit matrix
// descriptors, D held in N/2 f32 registers per thread (layout/
// wgmma_accumulator.hpp). The instructions are asynchronous: fence before the
// first, commit them as a group, wait for the group before touching D.
#pragma once

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

  // wgmma.mma_async.sync.aligned.m64n<N>k16.f32.<ab>.<ab> {d}, desc_a, desc_b,
  //   scale_d, 1, 1, tnsp_a, tnsp_b
  // N = d.size() * 2 (8..256, a multiple of 8); ab is bf16 or f16; d are f32.
  // scale_d: false (or a false predicate) ignores the old D (D = A·B).
  void wgmma_mma_async(Type ab_type, const Regs& d, const Reg& desc_a, const Reg& desc_b,
                       std::variant<bool, PredUse> scale_d, WgmmaMajor a_major, WgmmaMajor b_major);

  // setmaxnreg.{inc,dec}.sync.aligned.u32 count (PTX ISA 9.7.19.x): the
  // warpgroup's threads ask for (inc) or give back (dec) registers; count is a
  // multiple of 8 in 24..256.
  void setmaxnreg_inc(int count);
  void setmaxnreg_dec(int count);

 private:
  void setmaxnreg(const char* opcode, int count);
};

}  // namespace warpforge::dsl
