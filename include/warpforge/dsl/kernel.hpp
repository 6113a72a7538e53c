// Kernel: the builder a warpforge kernel is written with. One call emits one
// PTX instruction (helpers that emit a short sequence say so); the result is a
// ptx::Module (module()) or its text (ptx()).
//
//   Kernel k("axpy", Target::sm_80);
//   Reg x = k.param_ptr("x"), n = k.param(u32, "n");
//   Reg i = k.sreg(SReg::tid_x);
//   k.if_then(i < n, [&] { ... });
#pragma once

#include "warpforge/dsl/isa/alu.hpp"
#include "warpforge/dsl/isa/async_copy.hpp"
#include "warpforge/dsl/isa/atomic.hpp"
#include "warpforge/dsl/isa/bits.hpp"
#include "warpforge/dsl/isa/cluster.hpp"
#include "warpforge/dsl/isa/control.hpp"
#include "warpforge/dsl/isa/convert.hpp"
#include "warpforge/dsl/isa/matrix.hpp"
#include "warpforge/dsl/isa/mbarrier.hpp"
#include "warpforge/dsl/isa/memory.hpp"
#include "warpforge/dsl/isa/mma.hpp"
#include "warpforge/dsl/isa/sync.hpp"
#include "warpforge/dsl/isa/tcgen05.hpp"
#include "warpforge/dsl/isa/tensor_copy.hpp"
#include "warpforge/dsl/isa/warp.hpp"
#include "warpforge/dsl/isa/wgmma.hpp"
#include "warpforge/dsl/isa/wmma.hpp"
#include "warpforge/dsl/operators.hpp"

namespace warpforge::dsl {

class Kernel final : public ControlOps,
                     public MemoryOps,
                     public ConvertOps,
                     public SyncOps,
                     public WarpOps,
                     public AtomicOps,
                     public MmaOps,
                     public WmmaOps,
                     public MatrixOps,
                     public AsyncCopyOps,
                     public BitOps,
                     public MbarrierOps,
                     public TensorCopyOps,
                     public WgmmaOps,
                     public Tcgen05Ops,
                     public ClusterOps {
 public:
  Kernel(std::string name, Target target) : KernelCore(std::move(name), target) {}
};

}  // namespace warpforge::dsl
