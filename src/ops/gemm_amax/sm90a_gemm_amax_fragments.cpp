// The sm90a GemmAmax kernel: fragment warpgroups (E2M1, 256 x 128 tiles,
// 512 threads). Each of the four warpgroups dequantizes its 64 rows of A
// into wgmma's register-A fragments and a quarter of B's 128 rows into the
// bf16 stages, then runs wgmma m64n128k16 on them.
#include <bit>

#include "sm90a_gemm_amax_builder.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops::sm90a_amax {

// Thread t of the 512 takes 16 codes (8 bytes, one scale) of B's row t / 4:
// chunk c = t % 4, the codes an A thread with lane % 4 = c takes of its own
// rows (a_rows). So its pair j (dequant_fp4's order) belongs where that A
// thread's pair j sits, wgmma position 16·(j/2) + 8·(j%2) + 2c
// (load_a_rows): word c of the row's 16-byte chunk j, which the 128-byte
// swizzle puts at chunk j ^ (row % 8). A warp's 8 rows x 4 words of one
// chunk cover the 32 banks once; its loads are 256 contiguous bytes.
AmaxKernel::BChunk AmaxKernel::b_chunk(const Reg& code0) {
  Reg row = tid_ >> 2u, c = tid_ & 3u;  // code0 = 16c (t % 4 = lane % 4)
  BChunk b;
  b.row = {row * raw_row_bytes() + (c << 3u) + imm(smem_.raw_b - smem_.raw_a),
           scale_site(row, code0) + imm(smem_.raw_sfb - smem_.raw_sfa)};
  b.store = (row * kRow) | ((row & 7u) << 4u) | (c << 2u);
  return b;
}

// Block `g` of the CTA (counting every unit's K blocks) sits in raw stage
// g % raw_stages and bf16 stage g % stages (both powers of two), in their
// (g / stages)-th use: one counter instead of a stage and phase for each
// ring (registers are scarce).
Reg AmaxKernel::ring_stage(const Reg& g, int stages) { return g & imm(stages - 1); }
Reg AmaxKernel::ring_phase(const Reg& g, int stages) { return (g >> imm(std::countr_zero(unsigned(stages)))) & 1u; }

// B's chunk of K block kb, the CTA's block `g` (its raw stage full by
// then), into its bf16 stage once every warpgroup's wgmma left it (empty),
// announced on the stage's `full` barrier behind a proxy fence (wgmma
// reads through the async proxy, PTX ISA 9.7.13.4).
void AmaxKernel::convert_b_chunk(const Reg& code0, const Reg& g, const Reg& kb) {
  const BChunk b = b_chunk(code0);  // (from the thread index each time: held across the loop, it spills)
  Reg rstage = ring_stage(g, t_.raw_stages), cstage = ring_stage(g, t_.stages);
  k_.mbarrier_wait_parity(at(barrier(smem_.raw_full, rstage)), ring_phase(g, t_.raw_stages));
  Regs w{k_.reg(b32), k_.reg(b32)}, pairs = k_.regs(b32, 8);
  k_.ld(Space::shared, b32, w, at(base_ + smem_.raw_a + rstage * smem_.raw_stage + b.row.raw));
  dequant_words({{w}, {scale_bytes(base_ + smem_.raw_sfa + rstage * smem_.sf_stage, b.row, kb, 1)}, {pairs}}, 1, kb,
                code0);
  k_.mbarrier_wait_parity(at(barrier(smem_.empty, cstage)), ring_phase(g, t_.stages) ^ 1u);
  Reg dst = base_ + smem_.b + cstage * smem_.b_stage + b.store;
  for (int j = 0; j < 8; ++j) k_.st(Space::shared, b32, at(dst ^ imm(j << 4)), pairs[static_cast<std::size_t>(j)]);
  k_.fence_proxy_async_shared();
  k_.mbarrier_arrive(at(barrier(smem_.full, cstage)));
}

// A's rows of K block kb, the CTA's block `g`, into fragments `out`
// (load_a_rows, one fold branch for both); B's chunk of the block was
// converted before (convert_b_chunk), so the raw stage is free after. g
// moves on.
void AmaxKernel::convert_a_rows(const ARows& a, const Reg& g, const Reg& kb, const Regs& out) {
  Reg rstage = ring_stage(g, t_.raw_stages);
  CodeSets sets;
  load_a_rows(a, rstage, kb, out, sets);
  dequant_words(sets, 1, kb, a.code0);
  k_.mbarrier_arrive(at(barrier(smem_.raw_empty, rstage)));
  k_.add(g, g, 1u);
}

// One unit's K loop: block kb's four wgmma (A from fragments `now`, B from
// its bf16 stage once every thread stored its chunk: full); wait_group 1,
// so block kb - 1's wgmma completed: the warpgroup frees that stage
// (empty) and may rewrite `next`, which they read; thread 0's next TMA
// load; then B's chunk of block kb + 2 and A's rows of kb + 1 (into
// `next`) converted while block kb's wgmma run. B runs two blocks ahead so
// that no warpgroup waits at `full` for the slowest warp's chunk of the
// block it is about to multiply (with B one block ahead, 20% of the warps'
// samples sat there: Nsight Compute, NVFP4 4096^3, H200). A warpgroup
// issues block kb + 1 without waiting for its block kb, so the tensor pipe
// holds every warpgroup's block while they convert. One raw stage is
// loaded per K block, a block's worth behind the A conversions (the stage
// of block kb, whose A every thread converted in its previous block), by
// a different warp each block: it rarely waits on raw_empty. `ga` counts the CTA's blocks whose A is
// converted (B's blocks are ga's plus one or two: no counter of their own,
// registers are scarce).
void AmaxKernel::mainloop_fragments(const Regs& acc, const Reg& ga, const Pred& leader, const ARows& a,
                                    const TileCoords& t) {
  const Regs frags[2] = {k_.regs(b32, 16, "afrag"), k_.regs(b32, 16, "afrag_next")};
  convert_b_chunk(a.code0, ga, t.kb0);
  k_.if_then(t.kb0 + 1u < t.kb1, [&] { convert_b_chunk(a.code0, ga + 1u, t.kb0 + 1u); });
  convert_a_rows(a, ga, t.kb0, frags[0]);
  for_blocks_in_pairs(t, frags, [&](const Reg& kb, const Regs& now, const Regs& next) {
    Reg mine = ga - 1u;  // kb's block: the last whose A is converted
    Reg stage = ring_stage(mine, t_.stages);
    k_.mbarrier_wait_parity(at(barrier(smem_.full, stage)), ring_phase(mine, t_.stages));
    // (The descriptor built per block: one held across the loop costs a spill.)
    Reg db = tile::warpgroup::smem_descriptor(k_, base_ + smem_.b + stage * smem_.b_stage, 16, kAtom);
    wgmma_a_fragments(acc, now, db, kb != t.kb0);
    k_.wgmma_wait_group(1);
    k_.if_then(leader && kb != t.kb0, [&] { k_.mbarrier_arrive(at(barrier(smem_.empty, ring_stage(mine - 1u, t_.stages)))); });
    // Block kb's raw stage is free once every thread converted its A (in its
    // previous block): block kb + raw_stages goes there, issued by lane 0
    // of warp kb % 16 (load_block).
    k_.if_then(tid_ == ((mine & 15u) << 5u), [&] { load_block(mine + imm(t_.raw_stages)); });
    k_.if_then(kb + 2u < t.kb1, [&] { convert_b_chunk(a.code0, ga + 1u, kb + 2u); });  // ga: kb + 1's block
    k_.if_then(kb + 1u < t.kb1, [&] { convert_a_rows(a, ga, kb + 1u, next); });
  });
  // The unit's last block: its stage freed once its wgmma completed.
  k_.wgmma_wait_group(0);
  k_.if_then(leader, [&] { k_.mbarrier_arrive(at(barrier(smem_.empty, ring_stage(ga - 1u, t_.stages)))); });
}

// The CTA's block g (its units' K blocks in turn; no split, so every unit
// has all of them) into raw stage g % raw_stages, if the CTA has a unit
// that far on, once every thread freed the stage from block g -
// raw_stages (raw_empty; slots start empty, as in producer()). From the
// index alone, so that any thread can issue it: a load cursor kept by one
// warp made that warp the slowest of the sixteen, and every warpgroup
// waited for its B chunks (mainloop_fragments).
void AmaxKernel::load_block(const Reg& g) {
  Reg nth = k_.reg(u32);
  k_.div(nth, g, imm(kblocks_));
  Reg unit = first_unit() + nth * unit_step();
  k_.if_then(unit < imm(per_batch_ * p_.l), [&] {
    const TileCoords t = tile_of(unit);
    Reg stage = ring_stage(g, t_.raw_stages);
    k_.mbarrier_wait_parity(at(barrier(smem_.raw_empty, stage)), ring_phase(g, t_.raw_stages) ^ 1u);
    load_stage(t.m0, t.n0, t.batch, g - nth * imm(kblocks_), stage);
  });
}

}  // namespace warpforge::ops::sm90a_amax
