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
                                  const Reg& rstage, const Reg& kb, const std::variant<bool, PredUse>& accumulate,
                                  const std::function<void(int)>& after_step) {
  Reg raw = base_ + smem_.raw_a + rstage * smem_.raw_stage;
  Reg sf = base_ + smem_.raw_sfa + rstage * smem_.sf_stage;
  Regs w[2];
  Reg bytes[2];
  for (int h = 0; h < 2; ++h) {
    w[h] = k_.regs(b32, 2);
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
      // Each pair of steps loads the word it converts (registers).
      if (s % 2 == 0) k_.ld(Space::shared, b32, word, at(raw + a.rows[h].raw, a.rows[h].raw_offset + 2 * s));
      Reg from = s % 2 ? Reg(word >> 8u) : word;
      for (int e = 0; e < 2; ++e)
        fp4_pair(from, 2 * (s % 2) + e, factor[h], set[static_cast<std::size_t>(2 * e + h)], false);
    }
    k_.wgmma_fence();
    // Each k16 step moves 32 bytes along B's K-major rows.
    k_.wgmma_mma_async(bf16, bf16, acc, set, desc_b + static_cast<std::uint64_t>(2 * s),
                       s == 0 ? accumulate : std::variant<bool, PredUse>(true), WgmmaMajor::k);
    k_.wgmma_commit_group();
    if (after_step) after_step(s);
  }
}

// One unit, for a consumer (acc, a, frags) or the helper warpgroup (loads,
// freed). The B of the unit's first K block is converted whole; then each
// block kb's A steps (a_fragment_steps) carry block kb + 1's B, two of a
// consumer's eight stores after each step's wgmma issue, so the tensor
// cores have work queued while the B is converted (two fragment sets hold
// only two steps in flight); the helper converts its rows of kb + 1 whole.
// One named barrier per block publishes its B (fence.proxy.async first:
// wgmma reads it through the async proxy). The barrier after block kb + 1's
// B frees raw stage kb (its A was converted before it): the helper's first
// thread then loads into it (`freed`: not at the kernel's first barrier).
// Three bf16 stages: block kb + 1's B is written after barrier kb, which
// every consumer reached after block kb - 1's steps, whose waits completed
// block kb - 2's wgmma, the last reader of that stage.
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
  auto publish = [&] {
    k_.fence_proxy_async_shared();
    // Not bar.sync (aligned): the fold branches and the raw-stage waits may
    // leave a warp's threads apart here (mainloop_converting).
    k_.barrier_sync(all, 128 * (kConsumers + 1));
    if (!loads) return;
    k_.if_then(tid_ == imm(128 * kProducerWg), [&] {
      k_.if_then(*freed != 0u, [&] { issue_load(*loads); });
      k_.mov(*freed, 1u);
    });
  };
  // Raw stage `rs` (phase `rp`): its B rows (K block kb) loaded for bf16 stage `cstage`.
  auto load_b = [&](const Reg& rs, const Reg& rp, const Reg& kb, const Reg& cstage, bool load) {
    k_.mbarrier_wait_parity(at(barrier(smem_.raw_full, rs)), rp);
    Reg sf = base_ + smem_.raw_sfb + rs * smem_.sf_stage;
    Reg raw = base_ + smem_.raw_b + rs * smem_.raw_stage, dst = base_ + smem_.b + cstage * smem_.b_stage;
    std::vector<BRowCodes> codes;
    for (std::size_t i = 0; i < rows.b.size(); ++i)
      codes.push_back(
          load_b_row(rows.m, raw, dst, rows.b[i], rows.stores[i], scale_bytes(sf, rows.b[i], kb, rows.m.scales), load));
    return codes;
  };
  auto convert_b = [&](const Reg& rs, const Reg& rp, const Reg& kb, const Reg& cstage) {
    for (const BRowCodes& r : load_b(rs, rp, kb, cstage, true)) convert_b_pairs(rows.m, r, kb, 0, 8);
  };
  auto a_steps = [&](const Reg& kb, const std::function<void(int)>& after_step) {
    a_fragment_steps(*a, *frags, *acc, stage_descriptor(desc_b0, stage, smem_.b_stage), rstage, kb,
                     Pred(kb != t.kb0), after_step);
  };
  convert_b(rstage, rphase, t.kb0, stage);
  publish();
  if (!acc) advance(rstage, rphase, t_.raw_stages);
  Reg last = t.kb1 - 1u;
  k_.for_range(t.kb0, last, 1, [&](Reg kb) {
    if (acc) {
      // The next raw stage (block kb + 1's) and its phase.
      Reg rs = rstage + 1u, rp = k_.reg(u32);
      k_.selp(rp, rphase ^ 1u, rphase, rs == imm(t_.raw_stages));
      k_.selp(rs, 0u, rs, rs == imm(t_.raw_stages));
      // (Each pair of steps loads the two words it converts: registers.)
      const std::vector<BRowCodes> codes = load_b(rs, rp, kb + 1u, next(stage), false);
      a_steps(kb, [&](int s) {
        for (const BRowCodes& r : codes) {
          if (s % 2 == 0) load_b_words(r, 2 * s, 2 * s + 4);
          convert_b_pairs(rows.m, r, kb + 1u, 2 * s, 2 * s + 2);
        }
      });
      advance(rstage, rphase, t_.raw_stages);
    } else {
      convert_b(rstage, rphase, kb + 1u, next(stage));
      advance(rstage, rphase, t_.raw_stages);
    }
    publish();
    k_.mov(stage, next(stage));
  });
  if (acc) {
    a_steps(last, nullptr);
    advance(rstage, rphase, t_.raw_stages);
    k_.wgmma_wait_group(0);
  }
  k_.mov(stage, next(stage));
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
