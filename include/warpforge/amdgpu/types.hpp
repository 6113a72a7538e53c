// The value types of the AMDGPU kernel IR. Each names an LLVM IR type and says
// how many 32-bit VGPR words one lane's value occupies, which is how the
// wave64 simulator stores it (AMD CDNA3 ISA, "Vector General Purpose
// Registers": every lane holds 32-bit registers; 64-bit and vector values take
// consecutive registers). 16-bit values (bf16 and f16 bit patterns) are kept as
// i16, as LLVM's bf16 MFMA intrinsics take them.
#pragma once

#include <string>

namespace warpforge::amdgpu {

enum class Type {
  i1,   // a per-lane condition (a VCC / SGPR-pair bit on hardware)
  i16,  // a bf16 or f16 bit pattern
  i32,
  i64,
  f32,
  ptr_global,  // ptr addrspace(1), 64-bit
  ptr_lds,     // ptr addrspace(3), a 32-bit offset into the workgroup's LDS
  v2i32,       // 8 bytes: one x2 load, four 16-bit values
  v4i32,       // 16 bytes: one x4 load, a buffer resource descriptor
  v4i16,       // an MFMA A/B operand: four bf16 or f16 in 2 VGPRs
  v4f32,       // the accumulator of a 16x16 MFMA
  v16f32,      // the accumulator of a 32x32 MFMA
};

struct TypeInfo {
  const char* name;  // as the IR printer and error messages spell it
  const char* llvm;  // the LLVM IR type
  int words;         // 32-bit words per lane in the simulator
  int bytes;         // size in memory (0 for i1)
  int elements;      // vector length, 1 for scalars
  Type element;      // the element type (the type itself for scalars)
};

const TypeInfo& info(Type t);
inline std::string type_name(Type t) {
  return info(t).name;
}
inline bool is_vector(Type t) {
  return info(t).elements > 1;
}

}  // namespace warpforge::amdgpu
