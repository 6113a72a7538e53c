#include "warpforge/tile/warpgroup_mma.hpp"

#include <string>
#include <variant>

#include "warpforge/error.hpp"

#include "warpforge/layout/wgmma_descriptor.hpp"

namespace warpforge::tile::warpgroup {

using namespace dsl;

Reg smem_descriptor(Kernel& k, const Reg& smem_address, std::uint32_t lbo_bytes, std::uint32_t sbo_bytes,
                    layout::SmemSwizzle swizzle) {
  const std::uint64_t fixed = layout::WgmmaDescriptor{0, lbo_bytes, sbo_bytes, swizzle}.encode();
  // The start address field is 14 bits of address >> 4 (PTX ISA 9.7.15.5.1,
  // "Matrix Descriptor Format"): the shared address is masked to them. In a
  // cluster launch the hardware's shared::cta addresses carry bits above
  // those (seen on an H200: unmasked, CTA rank 1's bits spilled into the
  // leading byte offset field and shifted every second 64-column box of an
  // N-major B).
  Reg wide = k.reg(u64);
  k.cvt(wide, (smem_address >> 4) & 0x3FFFu);
  return wide | fixed;
}

void mma_k_block(Kernel& k, const KBlock& block, const Regs& acc, const Reg& desc_a, const Reg& desc_b,
                 const std::variant<bool, PredUse>& accumulate) {
  k.wgmma_fence();
  for (int step = 0; step < block.k_steps; ++step) {
    std::variant<bool, PredUse> scale_d = true;
    if (step == 0) scale_d = accumulate;
    k.wgmma_mma_async(block.ab, acc, desc_a + (step * block.a_step >> 4), desc_b + (step * block.b_step >> 4),
                      scale_d, block.a_major, block.b_major);
  }
  k.wgmma_commit_group();
}

void mma_k_block(Kernel& k, const KBlock& block, const Regs& acc, const std::vector<Regs>& a_steps, const Reg& desc_b,
                 const std::variant<bool, PredUse>& accumulate) {
  if (static_cast<int>(a_steps.size()) != block.k_steps || block.a_major != WgmmaMajor::k)
    throw TileError("wgmma k-block in kernel '" + k.name() + "' with A from registers: " +
                    std::to_string(a_steps.size()) + " fragments for " + std::to_string(block.k_steps) +
                    " k-steps" + (block.a_major != WgmmaMajor::k ? ", A MN-major" : "") +
                    "; one fragment a step, A K-major (the register form's layout)");
  k.wgmma_fence();
  for (int step = 0; step < block.k_steps; ++step) {
    std::variant<bool, PredUse> scale_d = true;
    if (step == 0) scale_d = accumulate;
    k.wgmma_mma_async(block.ab, block.ab, acc, a_steps[static_cast<std::size_t>(step)],
                      desc_b + (step * block.b_step >> 4), scale_d, block.b_major);
  }
  k.wgmma_commit_group();
}

}  // namespace warpforge::tile::warpgroup
