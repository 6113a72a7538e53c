// The LLVM-IR emitter: a kernel of the AMDGPU IR as an LLVM IR module for
// amdgcn-amd-amdhsa. Every register becomes an addrspace(5) alloca that
// `opt -O2` promotes to SSA values; operations map to LLVM instructions and to
// the AMDGPU intrinsics documented in LLVM's AMDGPUUsage and
// IntrinsicsAMDGPU.td (llvm.amdgcn.workitem.id.*, llvm.amdgcn.mfma.*,
// llvm.amdgcn.raw.buffer.load/store.*, llvm.amdgcn.s.barrier).
#pragma once

#include <string>

#include "warpforge/amdgpu/ir.hpp"
#include "warpforge/amdgpu/target.hpp"

namespace warpforge::amdgpu {

std::string to_llvm_ir(const KernelIR& kernel, Target target);

}  // namespace warpforge::amdgpu
