#include "warpforge/tile/warpgroup_mma.hpp"

#include <variant>

#include "warpforge/layout/wgmma_descriptor.hpp"

namespace warpforge::tile::warpgroup {

using namespace dsl;

Reg smem_descriptor(Kernel& k, const Reg& smem_address, std::uint32_t lbo_bytes, std::uint32_t sbo_bytes) {
  const std::uint64_t fixed =
      layout::WgmmaDescriptor{0, lbo_bytes, sbo_bytes, layout::SmemSwizzle::b128}.encode();
  Reg wide = k.reg(u64);
  k.cvt(wide, smem_address >> 4);
  return wide | fixed;
}

void mma_k_block(Kernel& k, const KBlock& block, const Regs& acc, const Reg& desc_a, const Reg& desc_b,
                 const PredUse& accumulate) {
  k.wgmma_fence();
  for (int step = 0; step < block.k_steps; ++step) {
    std::variant<bool, PredUse> scale_d = true;
    if (step == 0) scale_d = accumulate;
    k.wgmma_mma_async(block.ab, acc, desc_a + (step * block.a_step >> 4), desc_b + (step * block.b_step >> 4),
                      scale_d, block.a_major, block.b_major);
  }
  k.wgmma_commit_group();
}

}  // namespace warpforge::tile::warpgroup
