// Warp-level matrix multiply-accumulate through fragments (PTX ISA 9.7.14.4
// wmma): wmma.load.{a,b,c}, wmma.mma and wmma.store.d in the floating-point
// forms: f16 inputs (f16 or f32 accumulators) and bf16 inputs (f32) in
// m16n16k16, m32n8k16 and m8n32k16, tf32 inputs (f32) in m16n16k8. Which
// element a fragment register holds is unspecified by the ISA: a kernel
// loads, multiplies and stores fragments, or applies one operation to every
// element. Registers per fragment (ptx/vocabulary_wmma.hpp): f16 A and B 8
// .b32; bf16 A and B 2, 4 or 8 .b32 by shape; tf32 A and B 4 .b32; f32 C/D 8
// .f32; f16 C/D 4 .b32.
#pragma once

#include "warpforge/dsl/kernel_core.hpp"
#include "warpforge/ptx/vocabulary_wmma.hpp"

namespace warpforge::dsl {

enum class WmmaShape { m16n16k16, m32n8k16, m8n32k16, m16n16k8 };
enum class WmmaLayout { row, col };
using ptx::WmmaMatrix;

class WmmaOps : public virtual KernelCore {
 public:
  // wmma.load.{a,b,c}.sync.aligned.layout.shape[.space].type {frag}, [a], stride
  // (stride in elements between rows of .row, columns of .col); `space` is
  // global, shared or generic.
  void wmma_load(WmmaMatrix matrix, WmmaShape shape, WmmaLayout layout, Space space, Type type,
                 const Regs& frag, const Addr& a, const Src& stride);
  // wmma.store.d.sync.aligned.layout.shape[.space].type [a], {frag}, stride
  void wmma_store(WmmaShape shape, WmmaLayout layout, Space space, Type type, const Addr& a,
                  const Regs& frag, const Src& stride);
  // wmma.mma.sync.aligned.alayout.blayout.shape.dtype[.atype.btype].ctype d, a, b, c:
  // D = A·B + C, A and B of `input` type (f16, bf16, tf32), C of c_type and
  // D of d_type (each f16 or f32 for f16 inputs, f32 otherwise).
  void wmma_mma(WmmaShape shape, WmmaLayout a_layout, WmmaLayout b_layout, Type input, Type d_type,
                Type c_type, const Regs& d, const Regs& a, const Regs& b, const Regs& c);
};

}  // namespace warpforge::dsl
