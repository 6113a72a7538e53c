#include "warpforge/amdgpu/types.hpp"

namespace warpforge::amdgpu {

const TypeInfo& info(Type t) {
  static const TypeInfo kInfo[] = {
      {"i1", "i1", 1, 0, 1, Type::i1},
      {"i16", "i16", 1, 2, 1, Type::i16},
      {"i32", "i32", 1, 4, 1, Type::i32},
      {"i64", "i64", 2, 8, 1, Type::i64},
      {"f32", "float", 1, 4, 1, Type::f32},
      {"ptr.global", "ptr addrspace(1)", 2, 8, 1, Type::ptr_global},
      {"ptr.lds", "ptr addrspace(3)", 1, 4, 1, Type::ptr_lds},
      {"v2i32", "<2 x i32>", 2, 8, 2, Type::i32},
      {"v4i32", "<4 x i32>", 4, 16, 4, Type::i32},
      {"v4i16", "<4 x i16>", 2, 8, 4, Type::i16},
      {"v4f32", "<4 x float>", 4, 16, 4, Type::f32},
      {"v16f32", "<16 x float>", 16, 64, 16, Type::f32},
  };
  return kInfo[static_cast<int>(t)];
}

}  // namespace warpforge::amdgpu
