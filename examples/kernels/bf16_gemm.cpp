#include "kernels/bf16_gemm.hpp"

#include <cmath>

#include "warpforge/dsl.hpp"
#include "warpforge/ops/half.hpp"

namespace warpforge::examples {

using namespace dsl;

ptx::Module bf16_gemm_kernel(ptx::Target target) {
  Kernel k("bf16_gemm_m16n8k16", target);
  Reg a_ptr = k.param_ptr("A", 4), bt_ptr = k.param_ptr("BT", 4), d_ptr = k.param_ptr("D", 8);
  k.param(u32, "M");  // the grid covers M; the kernel itself never reads it
  Reg n_dim = k.param(u32, "N"), k_dim = k.param(u32, "K");
  k.reqntid(32);

  // Fragment coordinates (PTX ISA 9.7.14.5.8, m16n8k16 bf16): g = lane / 4,
  // t = lane % 4. A reg r holds row g + 8·(r % 2), k = 2t + 8·(r / 2) and +1;
  // B reg r holds column g, k = 2t + 8·r and +1; D reg r holds row g + 8·(r / 2),
  // column 2t + r % 2.
  Reg lane = k.sreg(SReg::laneid);
  Reg g = lane >> 2, t2 = (lane & 3) << 1;
  Reg row0 = (k.sreg(SReg::ctaid_y) << 4) + g;  // m0 + g
  Reg row1 = row0 + 8;
  Reg col = (k.sreg(SReg::ctaid_x) << 3) + g;   // n0 + g: B's column for this thread

  auto address = [&](const Reg& base, const Reg& index, int elem_bytes) {
    Reg offset = k.reg(u64);
    k.mul_wide(offset, index, elem_bytes);
    return base + offset;
  };
  // Element indices of this thread's first A halves in rows row0/row1 and of B's column.
  Reg a0_index = row0 * k_dim + t2;
  Reg a1_index = row1 * k_dim + t2;
  Reg b_index = col * k_dim + t2;

  Regs acc = k.regs(f32, 4, "acc");
  for (const Reg& r : acc) k.mov(r, imm_f32(0.0f));
  Regs a = k.regs(b32, 4, "a"), b = k.regs(b32, 2, "b");

  k.for_range(0, k_dim, 16, [&](Reg kb) {
    Reg pa0 = address(a_ptr, a0_index + kb, 2), pa1 = address(a_ptr, a1_index + kb, 2);
    Reg pb = address(bt_ptr, b_index + kb, 2);
    k.ld(Space::global, b32, a[0], at(pa0));
    k.ld(Space::global, b32, a[1], at(pa1));
    k.ld(Space::global, b32, a[2], at(pa0, 16));  // k + 8: 8 bf16 further
    k.ld(Space::global, b32, a[3], at(pa1, 16));
    k.ld(Space::global, b32, b[0], at(pb));
    k.ld(Space::global, b32, b[1], at(pb, 16));
    k.mma_sync(MmaShape::m16n8k16, bf16, bf16, f32, acc, a, b, acc);
  });

  Reg out_col = (k.sreg(SReg::ctaid_x) << 3) + t2;
  k.st(Space::global, f32, at(address(d_ptr, row0 * n_dim + out_col, 4)), Regs{acc[0], acc[1]});
  k.st(Space::global, f32, at(address(d_ptr, row1 * n_dim + out_col, 4)), Regs{acc[2], acc[3]});
  return k.module();
}

const std::vector<GemmCase>& bf16_gemm_cases() {
  static const std::vector<GemmCase> kCases = {
      {16, 8, 16}, {16, 8, 64}, {32, 16, 32}, {64, 32, 64}, {128, 64, 128}};
  return kCases;
}

Bf16GemmData bf16_gemm_data(const GemmCase& c, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Bf16GemmData d;
  d.a.resize(static_cast<std::size_t>(c.m) * c.k);
  d.bt.resize(static_cast<std::size_t>(c.n) * c.k);
  for (auto& x : d.a) x = ops::f32_to_bf16_bits(0.1f * normal(rng));
  for (auto& x : d.bt) x = ops::f32_to_bf16_bits(0.1f * normal(rng));
  d.reference.resize(static_cast<std::size_t>(c.m) * c.n);
  for (int m = 0; m < c.m; ++m)
    for (int n = 0; n < c.n; ++n) {
      double sum = 0;
      for (int kk = 0; kk < c.k; ++kk)
        sum += double{ops::bf16_bits_to_f32(d.a[m * c.k + kk])} * ops::bf16_bits_to_f32(d.bt[n * c.k + kk]);
      d.reference[m * c.n + n] = static_cast<float>(sum);
    }
  return d;
}

std::size_t count_mismatches(const std::vector<float>& out, const std::vector<float>& ref, double atol, double rtol) {
  std::size_t bad = out.size() == ref.size() ? 0 : std::max(out.size(), ref.size());
  for (std::size_t i = 0; i < std::min(out.size(), ref.size()); ++i) {
    double diff = std::fabs(double{out[i]} - ref[i]);
    if (!(diff <= atol + rtol * std::fabs(double{ref[i]}))) ++bad;
  }
  return bad;
}

}  // namespace warpforge::examples
