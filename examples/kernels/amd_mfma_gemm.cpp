#include "kernels/amd_mfma_gemm.hpp"

#include <optional>

#include "warpforge/amdgpu/kernel.hpp"

namespace warpforge::examples {
namespace {

using amdgpu::Arg;
using amdgpu::AmdKernel;
using amdgpu::Mfma;
using amdgpu::Type;
using amdgpu::Val;

enum class Shapes { fixed_128, runtime, edge };

constexpr int kStageK = 16;                // K staged through LDS per step
constexpr int kLdsRowBytes = kStageK * 2;  // one staged row: 16 bf16

amdgpu::KernelIR build(const char* name, Shapes shapes, amdgpu::Target target) {
  AmdKernel k(name, target, kAmdGemmWorkgroup);
  Val a = k.param_ptr("A"), b = k.param_ptr("B"), c = k.param_ptr("C");
  Arg m = 128, n = 128, depth = 128;
  if (shapes != Shapes::fixed_128) {
    m = k.param_i32("m");
    n = k.param_i32("n");
    depth = k.param_i32("k");
  }
  std::optional<Val> rsrc_a, rsrc_b;
  if (shapes == Shapes::edge) {
    // The descriptors' ranges end with the matrices: loads past them read 0.
    rsrc_a = k.make_rsrc(a, k.mul(k.mul(m, depth), 2));
    rsrc_b = k.make_rsrc(b, k.mul(k.mul(n, depth), 2));
  }

  Val tid = k.workitem_id(0);
  Val wave = tid >> 6, lane = tid & 63;
  Val wave_row = (wave >> 1) * 32, wave_col = (wave & 1) * 32;  // the wave's 32 x 32 quarter
  Val tile_row = k.workgroup_id(1) * kAmdGemmTile, tile_col = k.workgroup_id(0) * kAmdGemmTile;
  Val lds_a = k.lds(kAmdGemmTile * kLdsRowBytes), lds_b = k.lds(kAmdGemmTile * kLdsRowBytes);

  // Staging: work-items 0-127 copy A's 64 x 16 slab, 128-255 B's, each one
  // 16-byte vector (eight bf16): row (tid % 128) / 2, half (tid % 2).
  Val stage_row = (tid & 127) >> 1, stage_half = tid & 1;
  Val stage_lds_offset = stage_row * kLdsRowBytes + stage_half * 16;
  // Waves 0-1 stage A, waves 2-3 B: the same in every lane of a wave, which
  // readfirstlane tells LLVM. Without it LLVM merges the two branches' loads
  // into one whose descriptor is picked per lane, and then has to loop over
  // the distinct descriptors (a "waterfall" loop).
  Val stages_b = k.readfirstlane(tid >> 7);

  Val acc = k.reg(Type::v16f32);
  for (int r = 0; r < 16; ++r) k.insert(acc, r, 0.0f);

  k.for_range(0, depth, kStageK, [&](Val k0) {
    auto stage = [&](Val matrix, const std::optional<Val>& rsrc, Val first_row, Val lds) {
      Val bytes = ((first_row + stage_row) * depth + k0 + stage_half * 8) * 2;
      Val v = rsrc ? k.buffer_load(Type::v4i32, *rsrc, bytes)
                   : k.load(Type::v4i32, k.ptr_add(matrix, bytes));
      k.store(k.ptr_add(lds, stage_lds_offset), v);
    };
    k.if_else(
        stages_b == 0, [&] { stage(a, rsrc_a, tile_row, lds_a); },
        [&] { stage(b, rsrc_b, tile_col, lds_b); });
    k.barrier();
    // Two MFMA steps of K = 8. Lane l holds A[i = l % 32][k = 4 (l / 32) .. + 3]
    // and B[k .. k + 3][j = l % 32] = Bᵀ row j: four consecutive bf16 of one
    // staged row either way (REFERENCE.md, v_mfma_f32_32x32x8 bf16).
    Val lane_offset = (lane & 31) * kLdsRowBytes + (lane >> 5) * 8;
    for (int step = 0; step < kStageK / 8; ++step) {
      Val a_frag = k.bitcast(
          Type::v4i16,
          k.load(Type::v2i32, k.ptr_add(lds_a, wave_row * kLdsRowBytes + lane_offset + step * 16)));
      Val b_frag = k.bitcast(
          Type::v4i16,
          k.load(Type::v2i32, k.ptr_add(lds_b, wave_col * kLdsRowBytes + lane_offset + step * 16)));
      k.mfma(Mfma::f32_32x32x8_bf16, acc, a_frag, b_frag, acc);
    }
    k.barrier();  // the slab is read by every wave before the next overwrites it
  });

  // Register r of lane l holds C[8 (r / 4) + 4 (l / 32) + r % 4][l % 32].
  Val col = tile_col + wave_col + (lane & 31);
  Val row_base = tile_row + wave_row + (lane >> 5) * 4;
  for (int r = 0; r < 16; ++r) {
    Val row = row_base + (8 * (r / 4) + r % 4);
    auto store = [&] { k.store(k.ptr_add(c, (row * n + col) * 4), k.extract(acc, r)); };
    if (shapes == Shapes::edge)
      k.if_then(k.bit_and(row < m, col < n), store);
    else
      store();
  }
  return k.ir();
}

}  // namespace

amdgpu::KernelIR amd_gemm_128_kernel(amdgpu::Target target) {
  return build("amd_gemm_128", Shapes::fixed_128, target);
}
amdgpu::KernelIR amd_gemm_runtime_kernel(amdgpu::Target target) {
  return build("amd_gemm_runtime", Shapes::runtime, target);
}
amdgpu::KernelIR amd_gemm_edge_kernel(amdgpu::Target target) {
  return build("amd_gemm_edge", Shapes::edge, target);
}

}  // namespace warpforge::examples
