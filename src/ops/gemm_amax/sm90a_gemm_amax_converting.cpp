// The sm90a GemmAmax kernel: the converting warpgroups (128 x 256 tiles,
// every format): each K block converted by all three, wgmma by two.
#include "sm90a_gemm_amax_builder.hpp"

namespace warpforge::ops::sm90a_amax {

// Converting warpgroups: thread t of the 384 (two consumer warpgroups and
// the helper) takes chunk c = t % C (E2M1: C = 2 chunks of 32 codes, 4 of
// 16 in a cluster; FP8: 4 of 16) of stage rows r = t / C + (384 / C) i of
// the stage_rows() (A's 128, then B's 256; in a cluster 128 of B's). In a
// raw stage (A's rows then B's) and a scale stage (SFA's piece, then SFB's)
// the stage row is all that counts: its piece is row / 128, its byte in the
// piece scale_site(row % 128). In a bf16 stage, row r's 64 codes are in K
// order, chunk c's n = codes / 8 16-byte chunks of bf16 at chunks
// (nc + q) ^ (r % 8), the 128-byte swizzle; the rows share r % 8. Where
// stage_rows() is no multiple of the row step (in a cluster: 256 rows,
// 96 apart), the last row is the consumers' alone (`consumer`): their
// threads come first, so their t / C are the lowest.
AmaxKernel::ConvertRows AmaxKernel::convert_rows(const ChunkMap& m, bool consumer) {
  Reg code0 = m.c * imm(m.codes);
  ConvertRows rows{m.row_in * raw_row_bytes() + m.c * imm(m.chunk_bytes), {},
                   (m.row_in * kRow) | (((m.c * imm(m.codes / 8)) ^ m.swz) << 4)};
  if (clustered()) rows.store = rows.store + (rank_ << imm(7 + 7));  // + 128 rows of 128 bytes on rank 1
  const int lowest = consumer ? 0 : 128 * kConsumers / m.chunks;
  const int highest = 128 * (consumer ? kConsumers : kConsumers + 1) / m.chunks - 1;
  for (int f = 0; lowest + f < stage_rows(); f += m.row_step) {
    if (highest + f >= stage_rows())
      throw OpsError("sm90a gemm_amax kernel: stage row " + std::to_string(f) + " + t / C is past the " +
                     std::to_string(stage_rows()) + " stage rows for some threads of a warpgroup only");
    // A site's row part (scale_site's, plus the piece) on the host: where
    // it moves by the same amount from row t / C to row t / C + f for all
    // of the role's threads, the first row's register serves.
    auto site_of = [](std::int64_t r) { return (r >> 7) * kScalePiece + ((r & 31) << 4) + (((r >> 5) & 3) << 2); };
    // (Only in a cluster, which needs the register: elsewhere the kernels
    // keep the code measured before clusters, MXFP8 measured 4% slower so.)
    bool same = clustered() && f > 0;
    for (int r = lowest; same && r <= highest; ++r) same = site_of(r + f) - site_of(r) == site_of(lowest + f) - site_of(lowest);
    if (same) {
      rows.sites.push_back({rows.sites.front().first, site_of(lowest + f) - site_of(lowest)});
      continue;
    }
    Reg row = m.row_in + imm(f);
    rows.sites.push_back({((row >> 7) * kScalePiece) + scale_site(row, code0), 0});
  }
  return rows;
}

// Raw stage `rstage` (K block kb) to bf16 stage `cstage`. Every row's loads
// first, then one branch on whether all its scales fold (scales_fold): the
// conversions form one block with the loads' latency behind them.
void AmaxKernel::convert_stage(const ChunkMap& m, const ConvertRows& rows, tile::PipelineState& raw, const Reg& kb,
                               const Reg& cstage) {
  raw_->wait(raw);
  Reg code0 = m.c * imm(m.codes);
  Reg codes = base_ + smem_.raw_a + raw.stage() * smem_.raw_stage + rows.raw;
  Reg sf = base_ + smem_.raw_sfa + raw.stage() * smem_.sf_stage;
  Reg dst = base_ + smem_.b + cstage * smem_.b_stage + rows.store;
  // Rows in groups of two (the registers of four FP8 rows' codes do not
  // fit beside the accumulators).
  const std::size_t rows_per_group = 2;
  for (std::size_t first = 0; first < rows.sites.size(); first += rows_per_group) {
    convert_group(m, rows, first, std::min(first + rows_per_group, rows.sites.size()), codes, sf, dst, kb, code0);
  }
  ++raw;
}

// Rows first .. last - 1 of the thread's (convert_stage).
void AmaxKernel::convert_group(const ChunkMap& m, const ConvertRows& rows, std::size_t first, std::size_t last,
                               const Reg& raw, const Reg& sf, const Reg& dst, const Reg& kb, const Reg& code0) {
  std::vector<Regs> words;
  std::vector<Reg> scales;
  for (std::size_t i = first; i < last; ++i) {
    const std::int64_t f = static_cast<std::int64_t>(i) * m.row_step;
    scales.push_back(scale_bytes(sf, RowReads{rows.raw, rows.sites[i].first, rows.sites[i].second}, kb, m.scales));
    words.push_back(k_.regs(b32, static_cast<int>(m.chunk_bytes / 4)));
    k_.ld(Space::shared, b32, words.back(), at(raw, f * raw_row_bytes()));
  }
  auto convert = [&](bool folded) {
    for (std::size_t i = 0; i < words.size(); ++i) {
      const Regs factors = scale_factors(scales[i], m.scales, kb, code0, folded);
      Regs out;
      for (int o = 0; o < m.codes / 2; ++o) out.push_back(k_.reg(b32));
      if (fp4())
        codes_.dequant_fp4(words[i], Regs{factors.front(), factors.back()}, out, folded);
      else
        codes_.dequant_fp8(words[i], factors.front(), out, folded);
      const std::int64_t f = static_cast<std::int64_t>(first + i) * m.row_step;
      for (int q = 0; q < m.codes / 8; ++q)
        k_.st(Space::shared, b32, at(dst ^ imm(q << 4), f * kRow), Regs(out.begin() + 4 * q, out.begin() + 4 * q + 4));
    }
  };
  // FP8 codes that are NaN or inf take the exact (slow) way too.
  Pred fast = fp4() ? codes_.scales_fold(scales, m.scales)
                    : Pred(codes_.scales_fold(scales, m.scales) && codes_.codes_finite(words));
  k_.if_else(fast, [&] { convert(true); }, [&] { convert(false); });
}

// Converting warpgroups, one unit: the consumers' four wgmma m64n256k16 of
// K block kb (A and B from bf16 stage `stage`) run while all three
// warpgroups convert block kb + 1 into the next stage. Three stages, one
// named barrier per block: a stage is written again two blocks after it was
// read, and each consumer waited for its own wgmma of that block
// (wait_group 1) before the barrier that the others passed since (PTX ISA
// 9.7.15.6, wgmma.wait_group); the stores reach the async proxy behind
// fence.proxy.async before the barrier. After a barrier that follows a
// conversion, that raw stage is free: the helper's first thread loads the
// cursor's next block into it (no empty barriers).
//
// In a cluster the helper's first thread then has the copy engine send the
// CTA's converted B rows of that stage into its partner's, completing on
// the partner's `peer_full` barrier of the stage (copy_to_partner). Each
// block kb then goes: all convert kb + 1; the consumers wait for their
// wgmma of kb - 1 (wait_group 0), the helper for the partner's rows of kb
// (a conversion after the partner sent them); the barrier; the consumers'
// wgmma of kb, which runs under the conversion of kb + 2. A stage is
// written again only after every wgmma that read it completed, in either
// CTA: the partner sends block j after its barrier j, which follows its
// helper's wait for this CTA's block j - 1, sent after this CTA's barrier
// j - 1, which followed its wait for the wgmma of block j - 3.
void AmaxKernel::mainloop_converting(const Regs* acc, const Reg& desc_a0, const Reg& desc_b0, const Reg& stage,
                                     const Reg& peer_phase, tile::PipelineState& raw, const ChunkMap& m,
                                     const ConvertRows& rows, LoadCursor* loads, const TileCoords& t) {
  const std::uint32_t all = 4;  // the named barrier of the three converting warpgroups (0-3 are taken)
  auto next = [&](const Reg& s) {
    Reg n = s + 1u;
    k_.selp(n, 0u, n, n == imm(t_.stages));
    return n;
  };
  // After converting into `converted` (when `more` holds, if given).
  auto publish = [&](const Reg& converted, const std::optional<Pred>& more) {
    k_.fence_proxy_async_shared();
    // Not bar.sync (aligned): the fold branches, the raw-stage waits and
    // the issuing thread's loads may leave a warp's threads apart here
    // (compute-sanitizer's synccheck flagged bar.sync, even behind a
    // bar.warp.sync).
    k_.barrier_sync(all, 128 * (kConsumers + 1));
    if (!loads) return;
    auto after = [&] {
      if (clustered()) copy_to_partner(converted);
      k_.if_then(tid_ == imm(128 * kProducerWg), [&] { issue_load(*loads); });
    };
    if (more)
      k_.if_then(*more, after);
    else
      after();
  };
  auto mma = [&](const Reg& kb) {
    Reg da = stage_descriptor(desc_a0, stage, smem_.b_stage), db = stage_descriptor(desc_b0, stage, smem_.b_stage);
    Pred accumulate = kb != t.kb0;
    k_.wgmma_fence();
    for (int s = 0; s < kSm90aGemmAmaxTileK / 16; ++s)  // each k16 step moves 32 bytes along the rows
      k_.wgmma_mma_async(bf16, bf16, *acc, da + static_cast<std::uint64_t>(2 * s), db + static_cast<std::uint64_t>(2 * s),
                         s == 0 ? std::variant<bool, PredUse>(accumulate) : true, WgmmaMajor::k, WgmmaMajor::k);
    k_.wgmma_commit_group();
  };
  convert_stage(m, rows, raw, t.kb0, stage);
  publish(stage, std::nullopt);
  k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
    if (!clustered()) {
      if (acc) mma(kb);
      k_.mov(stage, next(stage));
      Pred more = kb + 1u < t.kb1;
      k_.if_then(more, [&] { convert_stage(m, rows, raw, kb + 1u, stage); });
      if (acc) k_.wgmma_wait_group(1);
      publish(stage, more);
      return;
    }
    // (next(stage) is computed where it is used: a register held across a
    // conversion costs the FP8 consumers a spill.)
    Pred more = kb + 1u < t.kb1;
    k_.if_then(more, [&] { convert_stage(m, rows, raw, kb + 1u, next(stage)); });
    if (acc) {
      k_.wgmma_wait_group(0);
    } else {
      k_.mbarrier_wait_parity(at(peer_full_->address(stage)), peer_phase);
      Reg wrapped = k_.reg(u32);
      k_.selp(wrapped, 1u, 0u, stage == imm(t_.stages - 1));
      k_.xor_(peer_phase, peer_phase, wrapped);
    }
    publish(next(stage), more);
    if (acc) mma(kb);
    k_.mov(stage, next(stage));
  });
  if (acc) k_.wgmma_wait_group(0);
}

// In a cluster, after the barrier that follows converting bf16 stage
// `converted`: the helper's first thread arms this CTA's peer_full barrier
// of that stage for the partner's rows (their bytes, expect_tx), and has
// the copy engine send this CTA's converted B rows there (bf16 rows
// 128 .. 255 on either rank, 16 KB) to where the partner keeps them
// (remote_), completing on the partner's peer_full barrier of the stage.
// No thread waits for the copy: the stores before the barrier reached the
// async proxy (fence.proxy.async), and the stage is written again only
// after the partner's next block arrived, which it sent after this one
// landed (mainloop_converting).
void AmaxKernel::copy_to_partner(const Reg& converted) {
  k_.if_then(tid_ == imm(128 * kProducerWg), [&] {
    const std::uint32_t bytes = kTileM * kRow;
    Reg bar = peer_full_->address(converted);
    k_.mbarrier_arrive_expect_tx(at(bar), bytes);
    Reg partner_bar = k_.reg(u32);
    k_.mapa_shared(partner_bar, bar, rank_ ^ 1u);
    Reg from = base_ + smem_.b + converted * smem_.b_stage + imm(kTileM * kRow);
    k_.bulk_copy_to_cluster(at(from + remote_), at(from), bytes, at(partner_bar));
  });
}

// The helper warpgroup of the converting scheme: converts its share of
// every stage and, in its first thread, keeps the raw stages loaded: all
// of them at the start, then one per conversion (mainloop_converting).
void AmaxKernel::converting_helper() {
  const ChunkMap m = chunk_map();
  const ConvertRows rows = convert_rows(m, false);
  LoadCursor loads = load_cursor();
  k_.if_then(tid_ == imm(128 * kProducerWg), [&] {
    for (int i = 0; i < t_.raw_stages; ++i) issue_load(loads);
  });
  Reg stage = k_.mov(u32, 0), peer_phase = k_.mov(u32, 0);
  tile::PipelineState raw(k_, t_.raw_stages);
  Reg none = k_.mov(u64, 0u);
  for_each_tile([&](const TileCoords& t) {
    mainloop_converting(nullptr, none, none, stage, peer_phase, raw, m, rows, &loads, t);
  });
}

}  // namespace warpforge::ops::sm90a_amax
