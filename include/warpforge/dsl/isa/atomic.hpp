// Atomic read-modify-write (PTX ISA 9.7.13.7 atom) and reductions without a
// result (9.7.13.8 red), on the global or shared space.
#pragma once

#include <optional>

#include "warpforge/dsl/isa/sync.hpp"
#include "warpforge/ptx/modifiers.hpp"

namespace warpforge::dsl {

using ptx::AtomOp;  // ptx/modifiers.hpp

struct AtomOpts {
  std::optional<Scope> scope;  // .cta/.cluster/.gpu/.sys; absent = .gpu
  bool relaxed = false;        // .relaxed (sm_70+); absent = the default semantics
};

class AtomicOps : public virtual KernelCore {
 public:
  // atom.space.op.type d, [a], b[, c]: c only for cas (compare b, swap in c).
  void atom(Space space, AtomOp op, Type type, const Reg& d, const Addr& a, const Src& b,
            std::optional<Src> c = std::nullopt, AtomOpts o = {});
  void red(Space space, AtomOp op, Type type, const Addr& a, const Src& b, AtomOpts o = {});
  // red.global.add.v2/.v4.f32 [a], {b...} (PTX ISA 9.7.13.8, sm_90): 2 or 4
  // consecutive f32 (8 or 16 bytes, aligned to their size) added by one
  // instruction; global memory and add.f32 only.
  void red(Space space, AtomOp op, Type type, const Addr& a, const Regs& b, AtomOpts o = {});

 private:
  ptx::Instruction opcode_for(ptx::Opcode base, Space space, AtomOp op, Type type, AtomOpts o);
};

}  // namespace warpforge::dsl
