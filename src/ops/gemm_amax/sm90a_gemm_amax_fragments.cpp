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

// B's 256 rows over the 256 threads (chunk_map()): thread t takes chunk
// t % 2 (32 codes) of rows t / 2 and t / 2 + 128; it also dequantizes 32
// codes of A (a_fragment_steps): 96 codes a thread per K block.
AmaxKernel::FragmentRows AmaxKernel::fragment_rows() {
  FragmentRows r{chunk_map(), {}, {}};
  Reg code0 = r.m.c * imm(r.m.codes);
  for (int f = 0; f < 2; ++f) {
    Reg row = r.m.row_in + imm(128 * f);
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

// One unit. The B of the unit's first K block is converted whole; then each
// block kb's A steps (a_fragment_steps) carry block kb + 1's B, a quarter
// of each row's stores after each step's wgmma issue, so the tensor cores
// have this warpgroup's work queued while the B is converted. One named
// barrier per block publishes its B (fence.proxy.async first: wgmma reads
// it through the async proxy). The barrier after block kb + 1's B frees raw
// stage kb (its A was converted before it): thread 0 then loads into it
// (`freed`: not at the kernel's first barrier). Three bf16 stages: block
// kb + 1's B is written after barrier kb, which both warpgroups reached
// after block kb - 1's steps, whose waits completed block kb - 2's wgmma,
// the last reader of that stage.
void AmaxKernel::mainloop_fragments(const Regs& acc, const ARows& a, const std::vector<Regs>& frags,
                                    const Reg& desc_b0, const Reg& stage, const Reg& rstage, const Reg& rphase,
                                    const FragmentRows& rows, LoadCursor& loads, const Reg& freed,
                                    const TileCoords& t) {
  const std::uint32_t all = 4;  // the named barrier of the two warpgroups (0-3 are taken)
  auto next = [&](const Reg& s) {
    Reg n = s + 1u;
    k_.selp(n, 0u, n, n == imm(t_.stages));
    return n;
  };
  auto publish = [&] {
    k_.fence_proxy_async_shared();
    // Not bar.sync (aligned): the fold branches and the raw-stage waits may
    // leave a warp's threads apart here (mainloop_converting).
    k_.barrier_sync(all, 128 * kConsumers);
    k_.if_then(tid_ == 0u, [&] {
      k_.if_then(freed != 0u, [&] { issue_load(loads); });
      k_.mov(freed, 1u);
    });
  };
  // Raw stage `rs` (phase `rp`): the thread's B rows (K block kb) for bf16 stage `cstage`.
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
  auto a_steps = [&](const Reg& kb, const std::function<void(int)>& after_step) {
    a_fragment_steps(a, frags, acc, stage_descriptor(desc_b0, stage, smem_.b_stage), rstage, kb, Pred(kb != t.kb0),
                     after_step);
  };
  for (const BRowCodes& r : load_b(rstage, rphase, t.kb0, stage, true)) convert_b_pairs(rows.m, r, t.kb0, 0, 8);
  publish();
  Reg last = t.kb1 - 1u;
  k_.for_range(t.kb0, last, 1, [&](Reg kb) {
    // The next raw stage (block kb + 1's) and its phase.
    Reg rs = rstage + 1u, rp = k_.reg(u32);
    k_.selp(rp, rphase ^ 1u, rphase, rs == imm(t_.raw_stages));
    k_.selp(rs, 0u, rs, rs == imm(t_.raw_stages));
    const std::vector<BRowCodes> codes = load_b(rs, rp, kb + 1u, next(stage), false);
    a_steps(kb, [&](int s) {
      for (const BRowCodes& r : codes) {
        // (Each pair of steps loads the two words it converts: registers.)
        if (s % 2 == 0) load_b_words(r, 2 * s, 2 * s + 4);
        convert_b_pairs(rows.m, r, kb + 1u, 2 * s, 2 * s + 2);
      }
    });
    advance(rstage, rphase, t_.raw_stages);
    publish();
    k_.mov(stage, next(stage));
  });
  a_steps(last, nullptr);
  advance(rstage, rphase, t_.raw_stages);
  k_.wgmma_wait_group(0);
  k_.mov(stage, next(stage));
}

}  // namespace warpforge::ops::sm90a_amax
