// The sm90a GemmAmax kernel: converting warpgroups with A in register
// fragments (Sm90aGemmAmaxTiling::a_fragments; E2M1, 128 x 256, no
// cluster). All three warpgroups convert B into bf16 stages in the order
// the consumers' fragments take K (dequant_b); the consumers dequantize
// their rows of A straight into the fragments of wgmma's register-A form
// (PTX ISA 9.7.15.5.1.1), so no bf16 A is stored to shared memory or read
// back by wgmma: per 128 x 256 x 64 block 32 KB less shared-memory traffic
// than the scheme that converts A into the bf16 stages too.
#include "sm90a_gemm_amax_builder.hpp"

namespace warpforge::ops::sm90a_amax {

// B's 256 rows as chunk_map() splits the 384 threads: thread t takes chunk
// t % 2 (32 codes) of row t / 2, a consumer that row only (rows 0 - 127),
// a helper thread also the row 64 past it (rows 128 - 255). Each thread
// also dequantizes 32 codes of A (a_fragment_steps): 64 codes a thread.
AmaxKernel::FragmentRows AmaxKernel::fragment_rows(bool consumer) {
  FragmentRows r{chunk_map(), {}, {}};
  Reg code0 = r.m.c * imm(r.m.codes);
  for (int f = 0; f < (consumer ? 1 : 2); ++f) {
    Reg row = r.m.row_in + imm(64 * f);
    r.b.push_back({row * raw_row_bytes() + (r.m.c << 4), ((row >> 7) * kScalePiece) + scale_site(row, code0)});
    r.stores.push_back((row * kRow) | (r.m.swz << 4) | (r.m.c << 3));  // dequant_b's store pattern
  }
  return r;
}

// The thread's B rows of raw stage `rstage` (K block kb) into bf16 stage `cstage`.
void AmaxKernel::convert_b_stage(const FragmentRows& rows, const Reg& rstage, const Reg& rphase, const Reg& kb,
                                 const Reg& cstage) {
  k_.mbarrier_wait_parity(at(barrier(smem_.raw_full, rstage)), rphase);
  Reg sf = base_ + smem_.raw_sfb + rstage * smem_.sf_stage;
  std::vector<Reg> scales;
  for (const RowReads& row : rows.b) scales.push_back(scale_bytes(sf, row, kb, rows.m.scales));
  dequant_b(rows.m, base_ + smem_.raw_b + rstage * smem_.raw_stage, base_ + smem_.b + cstage * smem_.b_stage, rows.b,
            rows.stores, scales, kb);
}

// A consumer's A of raw stage `rstage` (K block kb): its two rows' 16 codes
// (one 8-byte load and one scale each, as dequant_a_fragments) into the
// four k16 steps' fragments, step s's wgmma m64n256k16 issued as soon as
// its fragment is written. Fragment set s was last read by the wgmma of
// step s one block earlier: with one commit group per step, wait_group(3)
// before writing it leaves the three steps issued since in flight, so the
// tensor cores always have this warpgroup's work queued. Every write of a
// fragment is followed by wgmma.fence before the wgmma that reads it (PTX
// ISA 9.7.15.6.1, wgmma.fence). Step s takes pairs 2s and 2s + 1 of each
// row: word s / 2 of the row's two, pairs 2(s % 2) + {0, 1} of it
// (dequant_fp4's numbering), fragment registers {row r pair 2s, row r + 8
// pair 2s, row r pair 2s + 1, row r + 8 pair 2s + 1}.
void AmaxKernel::a_fragment_steps(const ARows& a, const std::vector<Regs>& frags, const Regs& acc, const Reg& desc_b,
                                  const Reg& rstage, const Reg& kb, bool accumulate) {
  Reg raw = base_ + smem_.raw_a + rstage * smem_.raw_stage;
  Reg sf = base_ + smem_.raw_sfa + rstage * smem_.sf_stage;
  Regs w[2];
  Reg bytes[2];
  for (int h = 0; h < 2; ++h) {
    w[h] = k_.regs(b32, 2);
    k_.ld(Space::shared, b32, w[h], at(raw + a.rows[h].raw, a.rows[h].raw_offset));
    bytes[h] = scale_bytes(sf, a.rows[h], kb, 1);
  }
  // The scale factors as they are, two multiplies a pair (apply_scale,
  // not folded): a fold branch around the fragments' writes makes ptxas
  // serialize every wgmma (C7512, "insufficient register resources").
  Reg factor[2];
  for (int h = 0; h < 2; ++h) factor[h] = scale_factors(bytes[h], 1, kb, a.code0, false).front();
  for (int s = 0; s < kSm90aGemmAmaxTileK / 16; ++s) {
    const Regs& set = frags[static_cast<std::size_t>(s) % frags.size()];
    k_.wgmma_wait_group(static_cast<int>(frags.size()) - 1);
    for (int h = 0; h < 2; ++h) {
      const Reg& word = w[h][static_cast<std::size_t>(s / 2)];
      Reg from = s % 2 ? Reg(word >> 8u) : word;
      for (int e = 0; e < 2; ++e)
        fp4_pair(from, 2 * (s % 2) + e, factor[h], set[static_cast<std::size_t>(2 * e + h)], false);
    }
    k_.wgmma_fence();
    // Each k16 step moves 32 bytes along B's K-major rows.
    k_.wgmma_mma_async(bf16, bf16, acc, set, desc_b + static_cast<std::uint64_t>(2 * s),
                       std::variant<bool, PredUse>(s > 0 || accumulate), WgmmaMajor::k);
    k_.wgmma_commit_group();
  }
}

// One unit, for a consumer (acc, a, frags) or the helper warpgroup (loads,
// freed): per K block all convert B into a bf16 stage, one named barrier
// publishes it (fence.proxy.async first: wgmma reads it through the async
// proxy), then the consumers dequantize that block's A from the same raw
// stage and issue its wgmma (a_fragment_steps). So a raw stage is free
// after the barrier that follows the next block's B: the helper's first
// thread then loads into it (`freed`: not at the kernel's first barrier,
// which follows no A). Three bf16 stages: the B of block kb + 1 is written
// while wgmma reads block kb's stage; block kb - 2's wgmma completed (its
// last step's wait_group) before each consumer reached barrier kb - 1.
void AmaxKernel::mainloop_fragments(const Regs* acc, const ARows* a, const std::vector<Regs>* frags,
                                    const Reg& desc_b0, const Reg& stage, const Reg& rstage, const Reg& rphase,
                                    const FragmentRows& rows, LoadCursor* loads, const Reg* freed,
                                    const TileCoords& t) {
  const std::uint32_t all = 4;  // the named barrier of the three converting warpgroups (0-3 are taken)
  auto next = [&](const Reg& s) {
    Reg n = s + 1u;
    k_.selp(n, 0u, n, n == imm(t_.stages));
    return n;
  };
  auto block = [&](const Reg& kb, const Reg& cstage, bool accumulate) {
    convert_b_stage(rows, rstage, rphase, kb, cstage);
    k_.fence_proxy_async_shared();
    // Not bar.sync (aligned): the fold branches and the raw-stage waits may
    // leave a warp's threads apart here (mainloop_converting).
    k_.barrier_sync(all, 128 * (kConsumers + 1));
    if (loads) {
      k_.if_then(tid_ == imm(128 * kProducerWg), [&] {
        k_.if_then(*freed != 0u, [&] { issue_load(*loads); });
        k_.mov(*freed, 1u);
      });
    }
    if (acc) a_fragment_steps(*a, *frags, *acc, stage_descriptor(desc_b0, cstage, smem_.b_stage), rstage, kb, accumulate);
    advance(rstage, rphase, t_.raw_stages);
  };
  block(t.kb0, stage, false);
  k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
    k_.if_then(kb + 1u < t.kb1, [&] { block(kb + 1u, next(stage), true); });
    k_.mov(stage, next(stage));
  });
  if (acc) k_.wgmma_wait_group(0);
}

// The helper warpgroup with a_fragments: converts its B rows of every
// stage and, in its first thread, keeps the raw stages loaded.
void AmaxKernel::fragments_helper() {
  const FragmentRows rows = fragment_rows(false);
  LoadCursor loads = load_cursor();
  k_.if_then(tid_ == imm(128 * kProducerWg), [&] {
    for (int i = 0; i < t_.raw_stages; ++i) issue_load(loads);
  });
  Reg stage = k_.mov(u32, 0), rstage = k_.mov(u32, 0), rphase = k_.mov(u32, 0), freed = k_.mov(u32, 0);
  Reg none = k_.mov(u64, 0u);
  for_each_tile([&](const TileCoords& t) {
    mainloop_fragments(nullptr, nullptr, nullptr, none, stage, rstage, rphase, rows, &loads, &freed, t);
  });
}

}  // namespace warpforge::ops::sm90a_amax
