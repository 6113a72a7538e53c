#include "warpforge/amdgpu/mfma.hpp"

namespace warpforge::amdgpu {

const MfmaInfo& info(Mfma m) {
  static const MfmaInfo kInfo[] = {
      {"f32_32x32x8_bf16", 32, 32, 8, true, Type::v16f32, "amdgcn.mfma.f32.32x32x8bf16.1k"},
      {"f32_16x16x16_bf16", 16, 16, 16, true, Type::v4f32, "amdgcn.mfma.f32.16x16x16bf16.1k"},
      {"f32_32x32x8_f16", 32, 32, 8, false, Type::v16f32, "amdgcn.mfma.f32.32x32x8f16"},
      {"f32_16x16x16_f16", 16, 16, 16, false, Type::v4f32, "amdgcn.mfma.f32.16x16x16f16"},
  };
  return kInfo[static_cast<int>(m)];
}

std::string mnemonic(Mfma m, Target t) {
  const MfmaInfo& i = info(m);
  std::string shape = std::to_string(i.m) + "x" + std::to_string(i.n) + "x" + std::to_string(i.k);
  if (t == Target::gfx942) return "v_mfma_f32_" + shape + (i.bf16 ? "_bf16" : "_f16");
  return "v_mfma_f32_" + shape + (i.bf16 ? "bf16_1k" : "f16");
}

}  // namespace warpforge::amdgpu
