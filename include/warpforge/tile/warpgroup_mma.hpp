// Warpgroup-scope matrix multiply from shared memory (PTX ISA 9.7.15): the
// pieces every wgmma mainloop repeats, for tiles of swizzled 16-bit or
// 8-bit elements (the 128-byte swizzle unless told otherwise) whose 8-row
// atoms start on their swizzle's repeat (layout/wgmma_smem_layout.hpp).
//
//   Reg desc = warpgroup::smem_descriptor(k, a_tile_address, lbo, sbo);
//   warpgroup::mma_k_block(k, block, acc, desc_a + stage_offset, desc_b + ..., kb != 0);
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "warpforge/dsl/kernel.hpp"
#include "warpforge/layout/swizzle.hpp"

namespace warpforge::tile::warpgroup {

// The 64-bit wgmma descriptor of a tile swizzled by `swizzle` at the shared
// address `smem_address` (a register): the fixed fields (LBO, SBO, swizzle)
// from layout::WgmmaDescriptor, the start address added at run time. Adding
// (bytes >> 4) to the result moves the start address by `bytes`.
dsl::Reg smem_descriptor(dsl::Kernel& k, const dsl::Reg& smem_address, std::uint32_t lbo_bytes,
                         std::uint32_t sbo_bytes, layout::SmemSwizzle swizzle = layout::SmemSwizzle::b128);

// What one K block of the mainloop does: `k_steps` wgmma, m64nNk16 for
// bf16/f16 or m64nNk32 for e4m3/e5m2 (A and B both of type `ab`), each
// moving the descriptors on by a_step / b_step bytes: 32 along a K-major
// 128-byte row for either (one wgmma takes 32 bytes of K), two 8-row atoms
// down an MN-major tile (16-bit types only: 8-bit operands are K-major).
struct KBlock {
  dsl::Type ab = dsl::Type::bf16;
  dsl::WgmmaMajor a_major = dsl::WgmmaMajor::k, b_major = dsl::WgmmaMajor::k;
  int k_steps = 4;
  std::uint32_t a_step = 32, b_step = 32;
};

// wgmma.fence, the block's k_steps wgmma into `acc` (N = 2 · acc.size()),
// commit_group. The first wgmma adds to `acc` only where `accumulate` holds
// (false: D = A·B, the first block of a tile); the rest always add.
void mma_k_block(dsl::Kernel& k, const KBlock& block, const dsl::Regs& acc, const dsl::Reg& desc_a,
                 const dsl::Reg& desc_b, const std::variant<bool, dsl::PredUse>& accumulate);
// The same with A from registers (wgmma's RS form): a_steps[s] is k-step
// s's A fragment, four b32 a thread (layout/wgmma_a_fragment.hpp); B moves
// on by b_step bytes a step. wgmma reads the fragments asynchronously: they
// stay untouched until a wait_group retires the block (PTX ISA 9.7.15.7.3).
void mma_k_block(dsl::Kernel& k, const KBlock& block, const dsl::Regs& acc, const std::vector<dsl::Regs>& a_steps,
                 const dsl::Reg& desc_b, const std::variant<bool, dsl::PredUse>& accumulate);

}  // namespace warpforge::tile::warpgroup
