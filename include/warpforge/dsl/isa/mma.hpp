// Warp-level matrix multiply-accumulate (PTX ISA 9.7.14.5.14 mma.sync):
// D = A·B + C for one 16×8 output tile per warp, A row-major and B
// column-major. Register counts per thread (PTX ISA 9.7.14.5.x fragments):
//   m16n8k8  f16/bf16: A 2×b32, B 1×b32, C/D 4×f32 (or 2×f16x2 for f16 C/D)
//   m16n8k16 f16/bf16: A 4×b32, B 2×b32, C/D 4×f32 (or 2×f16x2)
//   m16n8k32 e4m3/e5m2: A 4×b32, B 2×b32, C/D 4×f32 (sm_89+)
#pragma once

#include <string_view>

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

enum class MmaShape { m16n8k8, m16n8k16, m16n8k32 };
std::string_view name(MmaShape s);
ptx::Mod mod(MmaShape s);  // the modifier word

class MmaOps : public virtual KernelCore {
 public:
  void mma_sync(MmaShape shape, Type a_type, Type b_type, Type acc_type, const Regs& d, const Regs& a,
                const Regs& b, const Regs& c);
};

}  // namespace warpforge::dsl
