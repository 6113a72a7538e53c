#include "kernels/warp_gemm.hpp"

#include "warpforge/dsl.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/tile/warp_copy.hpp"
#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::examples {

using namespace dsl;
using tile::GlobalTile;
using tile::RegisterTile;
using tile::SharedTile;

ptx::Module warp_gemm_16x8x16_kernel(ptx::Target target) {
  Kernel k("warp_gemm_16x8x16", target);
  Reg a_ptr = k.param_ptr("A", 4), bt_ptr = k.param_ptr("BT", 4), d_ptr = k.param_ptr("D", 8);
  k.reqntid(32);
  const auto atom = layout::mma_m16n8k16_f16();
  auto a = RegisterTile::allocate(k, atom.a, 16, 16, f16, "a");
  auto b = RegisterTile::allocate(k, atom.b, 16, 8, f16, "b");
  auto d = RegisterTile::allocate(k, atom.c, 16, 8, f32, "d");
  tile::warp::copy(k, GlobalTile{a_ptr, 16, true}, a);
  tile::warp::copy(k, GlobalTile{bt_ptr, 16, false}, b);  // B (K×N) is Bᵀ read column-major
  tile::warp::gemm(k, d, a, b, std::nullopt);
  tile::warp::copy(k, d, GlobalTile{d_ptr, 8, true});
  return k.module();
}

namespace {

// Copies a rows × cols tile of 16-bit elements, row-major with `cols` per row,
// from global to shared memory, 16 bytes per thread per step, applying the
// shared tile's swizzle to each 8-element chunk (the swizzle keeps chunks
// whole: it moves element-offset bits 3 and up).
void stage(Kernel& k, const Reg& global, const Reg& shared_base, int rows, int cols, const layout::Swizzle& swz,
           const Reg& lane) {
  const int chunks = rows * cols / 8;
  for (int first = 0; first < chunks; first += 32) {
    Reg chunk = lane + first;
    Reg element = chunk << 3;  // chunk·8: row-major offset of the chunk's first element
    Reg wide = k.reg(u64);
    k.mul_wide(wide, element, 2);
    Regs v = k.regs(b32, 4);
    k.ld(Space::global, b32, v, at(global + wide));
    Reg offset = element;
    if (!(swz == layout::Swizzle{})) {
      std::int64_t mask = ((std::int64_t{1} << swz.bits()) - 1) << swz.base();
      offset = element ^ ((element >> swz.shift()) & mask);
    }
    k.st(Space::shared, b32, at(shared_base + (offset << 1)), v);
  }
}

}  // namespace

ptx::Module warp_gemm_64x32x32_kernel(ptx::Target target) {
  Kernel k("warp_gemm_64x32x32", target);
  Reg a_ptr = k.param_ptr("A", 16), bt_ptr = k.param_ptr("BT", 16), c_ptr = k.param_ptr("C", 8),
      d_ptr = k.param_ptr("D", 8);
  k.reqntid(32);
  const int M = 64, N = 32, K = 32;
  // A rows are 64 bytes: the 64-byte Hopper swizzle pattern spreads the eight
  // 16-byte chunks of each group of rows over distinct banks.
  const layout::Swizzle a_swizzle = layout::smem_swizzle(layout::SmemSwizzle::b64, 2);
  Shared a_smem = k.shared("a_smem", M * K * 2, 128), b_smem = k.shared("bt_smem", N * K * 2, 128);
  Reg lane = k.sreg(SReg::laneid);
  stage(k, a_ptr, k.address_of(a_smem), M, K, a_swizzle, lane);
  stage(k, bt_ptr, k.address_of(b_smem), N, K, {}, lane);
  k.bar_warp_sync();

  const auto atom = layout::mma_m16n8k16_f16();
  auto a = RegisterTile::allocate(k, atom.a, M, K, bf16, "a");
  auto b = RegisterTile::allocate(k, atom.b, K, N, bf16, "b");
  auto c = RegisterTile::allocate(k, atom.c, M, N, f32, "c");
  auto d = RegisterTile::allocate(k, atom.c, M, N, f32, "d");
  tile::warp::copy(k, SharedTile{k.address_of(a_smem), K, true, a_swizzle}, a);
  tile::warp::copy(k, SharedTile{k.address_of(b_smem), K, false}, b);
  tile::warp::copy(k, GlobalTile{c_ptr, N, true}, c);
  tile::warp::gemm(k, d, a, b, c, 1.0f, 1.0f);
  tile::warp::copy(k, d, GlobalTile{d_ptr, N, true});
  return k.module();
}

namespace {

WarpGemmData make(int m, int n, int k, bool bf16, bool with_c, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto encode = [&](float x) { return bf16 ? ops::f32_to_bf16_bits(x) : ops::f32_to_f16_bits(x); };
  auto decode = [&](std::uint16_t h) { return bf16 ? ops::bf16_bits_to_f32(h) : ops::f16_bits_to_f32(h); };
  WarpGemmData d{m, n, k, bf16, {}, {}, {}, {}};
  for (int i = 0; i < m * k; ++i) d.a.push_back(encode(normal(rng)));
  for (int i = 0; i < n * k; ++i) d.bt.push_back(encode(normal(rng)));
  if (with_c)
    for (int i = 0; i < m * n; ++i) d.c.push_back(normal(rng));
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) {
      double sum = with_c ? d.c[r * n + col] : 0.0;
      for (int kk = 0; kk < k; ++kk) sum += double{decode(d.a[r * k + kk])} * decode(d.bt[col * k + kk]);
      d.reference.push_back(static_cast<float>(sum));
    }
  return d;
}

}  // namespace

WarpGemmData warp_gemm_16x8x16_data(std::mt19937& rng) { return make(16, 8, 16, false, false, rng); }
WarpGemmData warp_gemm_64x32x32_data(std::mt19937& rng) { return make(64, 32, 32, true, true, rng); }

}  // namespace warpforge::examples
