#include "kernels/mma_demo.hpp"

#include "warpforge/dsl.hpp"
#include "warpforge/ops/half.hpp"

namespace warpforge::examples {

using namespace dsl;

ptx::Module mma_demo_kernel(ptx::Target target) {
  Kernel k("mma_m16n8k8_demo", target);
  Reg a_ptr = k.param_ptr("A", 4), bt_ptr = k.param_ptr("BT", 4), d_ptr = k.param_ptr("D", 8);
  k.reqntid(32);

  // Fragment coordinates (PTX ISA 9.7.14.5.7, m16n8k8 f16): group g = lane / 4
  // owns rows g and g + 8; t = lane % 4 owns columns (or k) 2t and 2t + 1.
  Reg lane = k.sreg(SReg::laneid);
  Reg g = lane >> 2, t = lane & 3;
  Reg col = t << 1;

  auto element_address = [&](const Reg& base, const Reg& row, int row_len, int elem_bytes) {
    Reg index = row * row_len + col;
    Reg offset = k.reg(u64);
    k.mul_wide(offset, index, elem_bytes);
    return base + offset;
  };

  // A: two b32 registers, rows g and g + 8, halves at k = 2t, 2t + 1.
  Regs a = k.regs(b32, 2, "a");
  Reg g8 = g + 8;
  k.ld(Space::global, b32, a[0], element_address(a_ptr, g, 8, 2));
  k.ld(Space::global, b32, a[1], element_address(a_ptr, g8, 8, 2));
  // B: one b32 register, column n = g, k = 2t, 2t + 1: contiguous in Bᵀ's row g.
  Regs b = k.regs(b32, 1, "b");
  k.ld(Space::global, b32, b[0], element_address(bt_ptr, g, 8, 2));

  Regs acc = k.regs(f32, 4, "acc");
  for (const Reg& r : acc) k.mov(r, imm_f32(0.0f));
  k.mma_sync(MmaShape::m16n8k8, f16, f16, f32, acc, a, b, acc);

  // D: acc0/1 at row g, acc2/3 at row g + 8, columns 2t, 2t + 1.
  k.st(Space::global, f32, element_address(d_ptr, g, 8, 4), Regs{acc[0], acc[1]});
  k.st(Space::global, f32, element_address(d_ptr, g8, 8, 4), Regs{acc[2], acc[3]});
  return k.module();
}

MmaDemoData mma_demo_data() {
  MmaDemoData data;
  data.a.resize(16 * 8);
  for (int m = 0; m < 16; ++m)
    for (int kk = 0; kk < 8; ++kk) data.a[m * 8 + kk] = ops::f32_to_f16_bits(kk == 0 ? static_cast<float>(m) : 1.0f);
  data.bt.resize(8 * 8);
  for (int n = 0; n < 8; ++n)
    for (int kk = 0; kk < 8; ++kk) data.bt[n * 8 + kk] = ops::f32_to_f16_bits(kk == 1 ? 3.0f : 1.0f);
  // Row r: r·1 (k = 0) + 1·3 (k = 1) + 6 ones (k = 2..7) = r + 9.
  data.expected.resize(16 * 8);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) data.expected[m * 8 + n] = static_cast<float>(m + 9);
  return data;
}

}  // namespace warpforge::examples
