// Warp-collective 8×8 matrix loads and stores between shared memory and
// registers (PTX ISA 9.7.14.5.15 ldmatrix, 9.7.14.5.16 stmatrix): x1/x2/x4
// matrices of 16-bit elements, optionally transposed; each thread supplies
// one row address and receives one b32 register per matrix.
#pragma once

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

class MatrixOps : public virtual KernelCore {
 public:
  // ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 {d...}, [a]
  void ldmatrix(const Regs& d, const Addr& a, bool trans = false);
  // stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 [a], {s...} (sm_90+)
  void stmatrix(const Addr& a, const Regs& s, bool trans = false);

 private:
  ptx::Instruction opcode_for(ptx::Opcode base, std::size_t count, bool trans, const Addr& a);
};

}  // namespace warpforge::dsl
