// The sm90a GemmAmax design of three converting warpgroups (every format,
// 128 x 256 tiles, 384 threads; Sm90aGemmAmaxTiling without fp8_mma or
// dequantizer warpgroups): all three convert each raw stage, A's 128 rows
// and B's 256, to bf16 in one of three bf16 stages laid out as TMA's
// 128-byte swizzle would (16-byte chunk c of row r at chunk c ^ (r % 8));
// the consumer warpgroups 0 and 1 run wgmma m64n256k16 with both operands
// from the previous stage meanwhile. One named barrier per K block orders
// the stores before any wgmma reads them and frees the raw stage: the
// producer warpgroup (a converting warpgroup here, the template's producer
// role) then has its first thread load the next one (no empty barriers). A
// CTA this small is what lets ptxas give the m64n256 accumulators their
// registers (it compiles every thread within 65536 / threads, whatever
// setmaxnreg grants later), so no setmaxnreg.
//
// In a 2-CTA cluster (cluster_m 2) each CTA loads and converts only half of
// B's rows; after the barrier the copy engine sends them into the
// partner's bf16 stage (cp.async.bulk), completing on the partner's
// `peer_full` mbarrier, which its converting producer warpgroup waits for
// before its next barrier. Rank 0's stages hold A's rows, then B's; rank
// 1's B's, then A's (raw: its half of B first; bf16: all of B first), so
// in both a raw stage row r lands on bf16 row r + 128 x rank, and a CTA's
// converted B rows lie 128 rows before (rank 0) or after (rank 1) where its
// partner keeps them.
#include "sm90a_gemm_amax_design.hpp"

namespace warpforge::ops::sm90a_amax {
namespace {

// bf16 stages (A's 128 rows and B's 256), raw stages (A's rows and B's or a
// rank's half of them), scale stages (SFA's piece, SFB's pieces), and in a
// cluster the peer_full barrier of each bf16 stage.
struct Layout {
  std::uint32_t b_stage, raw_stage, sf_stage;
  std::uint32_t b, raw, sf, raw_full, raw_empty, peer_full, amax, bytes;
};

Layout layout(DType ab, const Sm90aGemmAmaxTiling& t) {
  Layout l{};
  l.b_stage = static_cast<std::uint32_t>(t.tile_n + kTileM) * kRow;
  l.raw_stage = static_cast<std::uint32_t>(kTileM + sm90a_gemm_amax_b_rows(t)) * sm90a_gemm_amax_raw_row_bytes(ab, t);
  l.sf_stage = static_cast<std::uint32_t>(1 + sm90a_gemm_amax_sfb_pieces(t)) * kScalePiece;
  tile::SharedLayout s;
  l.b = s.ring(l.b_stage, t.stages);
  l.raw = s.ring(l.raw_stage, t.raw_stages);
  l.sf = s.ring(l.sf_stage, t.raw_stages, 16);
  l.raw_full = s.mbarriers(t.raw_stages);
  l.raw_empty = s.mbarriers(t.raw_stages);  // the template's; the named barrier frees raw stages here
  if (t.cluster_m > 1) l.peer_full = s.mbarriers(t.stages);
  l.amax = s.buffer(8, 8);
  l.bytes = s.launch_bytes();
  return l;
}

constexpr int kConverters = 128 * (kConsumers + 1);  // the three warpgroups

class Converting final : public AmaxDesign {
 public:
  Converting(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) : AmaxDesign(p, t), l_(layout(p.ab_dtype, t)) {
    if (t.tile_n != 256 || t.stages != 3 || t.splits != 1)
      throw OpsError("sm90a gemm_amax kernel: tile_n " + std::to_string(t.tile_n) + ", " + std::to_string(t.stages) +
                     " stages, " + std::to_string(t.splits) +
                     " K splits with converting warpgroups; they take tile_n 256, 3 stages and no split");
    if (t.cluster_m != 1 && t.cluster_m != 2)
      throw OpsError("sm90a gemm_amax kernel: cluster_m " + std::to_string(t.cluster_m) +
                     "; it takes 1, or 2 with converting warpgroups");
    amax_slot_ = l_.amax;
  }

  tile::WarpSpecializedConfig config() const override {
    tile::WarpSpecializedConfig c = raw_config(l_.raw_full, l_.raw_empty);
    c.producer_registers = 0;  // the three warpgroups keep the entry's even split
    c.consumer_registers = 0;
    return c;
  }
  void prologue(tile::WarpSpecialized& ws) override;
  void initialize(tile::WarpSpecialized& ws) override {
    AmaxDesign::initialize(ws);
    // In a cluster: one arrival with the partner's bytes expected, and the copy's transaction (copy_to_partner).
    for (int st = 0; clustered() && st < t_.stages; ++st) peer_full_->init(st, 1);
  }
  void producer(tile::WarpSpecialized& ws) override;
  void consumer_setup(tile::WarpSpecialized& ws) override;
  void mainloop(tile::WarpSpecialized&, const tile::WorkItem& w, tile::PipelineState& raw) override {
    mainloop_converting(&acc_, desc_a0_, desc_b0_, stage_, nullptr, raw, *rows_, nullptr, w);
  }

 private:
  bool clustered() const { return t_.cluster_m == 2; }
  // clustered(): 1 where A's rows come first in the stages (rank 0), else 0.
  Reg a_first() {
    Reg r = k_.reg(u32);
    k_.selp(r, 1u, 0u, rank_ == 0u);
    return r;
  }
  int stage_rows() const { return kTileM + b_rows(); }
  // The rows a thread converts per K block, m.row_step apart through the
  // stage's 128 + tile_n (A's, then B's). The raw offset and store of each
  // are the first's plus constants.
  struct ConvertRows {
    ChunkMap m;
    Reg raw;  // the first row's codes in a raw stage
    // Each row's first scale byte in a scale stage: a register plus a
    // constant (the first row's register where the difference is the same
    // for every thread that takes the row: registers are scarce).
    std::vector<std::pair<Reg, std::int64_t>> sites;
    Reg store;  // the first row's first 16-byte chunk in a bf16 stage, before the xor of chunk q
  };
  ConvertRows convert_rows(bool consumer);
  void convert_stage(const ConvertRows& rows, tile::PipelineState& raw, const Reg& kb, const Reg& cstage);
  void convert_group(const ConvertRows& rows, std::size_t first, std::size_t last, const Reg& raw, const Reg& sf,
                     const Reg& dst, const Reg& kb, const Reg& code0);
  void copy_to_partner(const Reg& converted);
  // The producer warpgroup's first thread runs its loads ahead of the
  // conversions: the next item and K block to load and its raw stage.
  struct Loads {
    tile::WorkCursor cursor;
    Reg kb, stage;
  };
  void issue_load(Loads& l);
  RawStage cluster_stage(const Reg& stage, const tile::Tile& t);
  // The K loop over one item: with `acc`, a consumer's (wgmma), without,
  // the producer warpgroup's (conversion only; its first thread issues the
  // loads). `peer_phase`: the producer warpgroup's phase of the peer_full
  // barrier of `stage` (in a cluster).
  void mainloop_converting(const Regs* acc, const Reg& desc_a0, const Reg& desc_b0, const Reg& stage,
                           const Reg* peer_phase, tile::PipelineState& raw, const ConvertRows& rows, Loads* loads,
                           const tile::WorkItem& w);

  Layout l_;
  std::optional<tile::NamedBarrier> converters_;  // the three warpgroups, once per K block
  std::optional<tile::MbarrierArray> peer_full_;  // clustered(): the partner's B rows arrived
  Reg rank_;    // clustered(): the CTA's rank in its cluster
  Reg remote_;  // clustered(): added to a converted B row's bf16 address, the partner's place for it
  // The consumers': A's and B's wgmma descriptors of bf16 stage 0, the
  // bf16 stage they read, their rows to convert.
  Reg desc_a0_, desc_b0_, stage_;
  std::optional<ConvertRows> rows_;
};

void Converting::prologue(tile::WarpSpecialized& ws) {
  AmaxDesign::prologue(ws);
  converters_ = ws.named_barrier(kConverters);
  if (clustered()) {
    peer_full_.emplace(ws.mbarriers(l_.peer_full, t_.stages));
    rank_ = k_.sreg(SReg::cluster_ctarank);
    // The partner's base (the same offset in its shared memory) and 128
    // rows back or on (the two ranks' stage layouts).
    Reg partner = k_.reg(u32);
    k_.mapa_shared(partner, base_, rank_ ^ 1u);
    remote_ = partner - base_ + (rank_ << imm(7 + 8)) - imm(kTileM * kRow);
  }
}

// Thread t of the 384 takes chunk c = t % C (E2M1: C = 2 chunks of 32
// codes, 4 of 16 in a cluster; FP8: 4 of 16) of stage rows r = t / C +
// (384 / C) i of the stage_rows() (A's 128, then B's 256; in a cluster 128
// of B's). In a raw stage (A's rows then B's) and a scale stage (SFA's
// piece, then SFB's) the stage row is all that counts: its piece is row /
// 128, its byte in the piece scale_site(row % 128). In a bf16 stage, row r's
// 64 codes are in K order, chunk c's n = codes / 8 16-byte chunks of bf16 at
// chunks (nc + q) ^ (r % 8), the 128-byte swizzle; the rows share r % 8.
// Where stage_rows() is no multiple of the row step (in a cluster: 256
// rows, 96 apart), the last row is the consumers' alone (`consumer`): their
// threads come first, so their t / C are the lowest.
Converting::ConvertRows Converting::convert_rows(bool consumer) {
  const ChunkMap m = chunk_map(tid_, kConverters, clustered());
  Reg code0 = m.c * imm(m.codes);
  ConvertRows rows{m, m.row_in * raw_row_bytes() + m.c * imm(m.chunk_bytes), {},
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
    for (int r = lowest; same && r <= highest; ++r)
      same = site_of(r + f) - site_of(r) == site_of(lowest + f) - site_of(lowest);
    if (same) {
      rows.sites.push_back({rows.sites.front().first, site_of(lowest + f) - site_of(lowest)});
      continue;
    }
    Reg row = m.row_in + imm(f);
    rows.sites.push_back({((row >> 7) * kScalePiece) + scale_site(row, code0), 0});
  }
  return rows;
}

// The raw stage (K block kb) to bf16 stage `cstage`. Every row's loads
// first, then one branch on whether all its scales fold (scales_fold): the
// conversions form one block with the loads' latency behind them.
void Converting::convert_stage(const ConvertRows& rows, tile::PipelineState& raw, const Reg& kb,
                               const Reg& cstage) {
  ws_->pipeline().wait(raw);
  Reg code0 = rows.m.c * imm(rows.m.codes);
  Reg codes = base_ + l_.raw + raw.stage() * l_.raw_stage + rows.raw;
  Reg sf = base_ + l_.sf + raw.stage() * l_.sf_stage;
  Reg dst = base_ + l_.b + cstage * l_.b_stage + rows.store;
  // Rows in groups of two (the registers of four FP8 rows' codes do not
  // fit beside the accumulators).
  const std::size_t rows_per_group = 2;
  for (std::size_t first = 0; first < rows.sites.size(); first += rows_per_group)
    convert_group(rows, first, std::min(first + rows_per_group, rows.sites.size()), codes, sf, dst, kb, code0);
  ++raw;
}

// Rows first .. last - 1 of the thread's (convert_stage).
void Converting::convert_group(const ConvertRows& rows, std::size_t first, std::size_t last, const Reg& raw,
                               const Reg& sf, const Reg& dst, const Reg& kb, const Reg& code0) {
  const ChunkMap& m = rows.m;
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

// The consumers' four wgmma m64n256k16 of K block kb (A and B from bf16
// stage `stage`) run while all three warpgroups convert block kb + 1 into
// the next stage. Three stages, one named barrier per block: a stage is
// written again two blocks after it was read, and each consumer waited for
// its own wgmma of that block (wait_group 1) before the barrier that the
// others passed since (PTX ISA 9.7.15.6, wgmma.wait_group); the stores
// reach the async proxy behind fence.proxy.async before the barrier. After
// a barrier that follows a conversion, that raw stage is free: the
// producer warpgroup's first thread loads the cursor's next block into it.
//
// In a cluster the producer warpgroup's first thread then has the copy
// engine send the CTA's converted B rows of that stage into its partner's,
// completing on the partner's `peer_full` barrier of the stage
// (copy_to_partner). Each block kb then goes: all convert kb + 1; the
// consumers wait for their wgmma of kb - 1 (wait_group 0), the producer
// warpgroup for the partner's rows of kb (a conversion after the partner
// sent them); the barrier; the consumers' wgmma of kb, which runs under the
// conversion of kb + 2. A stage is written again only after every wgmma
// that read it completed, in either CTA: the partner sends block j after
// its barrier j, which follows its producer warpgroup's wait for this
// CTA's block j - 1, sent after this CTA's barrier j - 1, which followed
// its wait for the wgmma of block j - 3.
void Converting::mainloop_converting(const Regs* acc, const Reg& desc_a0, const Reg& desc_b0, const Reg& stage,
                                     const Reg* peer_phase, tile::PipelineState& raw, const ConvertRows& rows,
                                     Loads* loads, const tile::WorkItem& w) {
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
    converters_->sync_unaligned();
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
  const tile::warpgroup::KBlock block{.ab = bf16, .k_steps = kSm90aGemmAmaxTileK / 16};
  auto mma = [&](const Reg& kb) {
    Reg da = stage_descriptor(desc_a0, stage, l_.b_stage), db = stage_descriptor(desc_b0, stage, l_.b_stage);
    tile::warpgroup::mma_k_block(k_, block, *acc, da, db, kb != w.kb0);
  };
  convert_stage(rows, raw, w.kb0, stage);
  publish(stage, std::nullopt);
  k_.for_nonempty_range(w.kb0, w.kb1, 1, [&](Reg kb) {
    if (!clustered()) {
      if (acc) mma(kb);
      k_.mov(stage, next(stage));
      Pred more = kb + 1u < w.kb1;
      k_.if_then(more, [&] { convert_stage(rows, raw, kb + 1u, stage); });
      if (acc) k_.wgmma_wait_group(1);
      publish(stage, more);
      return;
    }
    // (next(stage) is computed where it is used: a register held across a
    // conversion costs the FP8 consumers a spill.)
    Pred more = kb + 1u < w.kb1;
    k_.if_then(more, [&] { convert_stage(rows, raw, kb + 1u, next(stage)); });
    if (acc) {
      k_.wgmma_wait_group(0);
    } else {
      peer_full_->wait(stage, *peer_phase);
      Reg wrapped = k_.reg(u32);
      k_.selp(wrapped, 1u, 0u, stage == imm(t_.stages - 1));
      k_.xor_(*peer_phase, *peer_phase, wrapped);
    }
    publish(next(stage), more);
    if (acc) mma(kb);
    k_.mov(stage, next(stage));
  });
  if (acc) k_.wgmma_wait_group(0);
}

// In a cluster, after the barrier that follows converting bf16 stage
// `converted`: the producer warpgroup's first thread arms this CTA's
// peer_full barrier of that stage for the partner's rows (their bytes,
// expect_tx), and has the copy engine send this CTA's converted B rows
// there (bf16 rows 128 .. 255 on either rank, 16 KB) to where the partner
// keeps them (remote_), completing on the partner's peer_full barrier of
// the stage. No thread waits for the copy: the stores before the barrier
// reached the async proxy (fence.proxy.async), and the stage is written
// again only after the partner's next block arrived, which it sent after
// this one landed (mainloop_converting).
void Converting::copy_to_partner(const Reg& converted) {
  k_.if_then(tid_ == imm(128 * kProducerWg), [&] {
    const std::uint32_t bytes = kTileM * kRow;
    peer_full_->expect_tx(converted, bytes);
    Reg partner_bar = k_.reg(u32);
    k_.mapa_shared(partner_bar, peer_full_->address(converted), rank_ ^ 1u);
    Reg from = base_ + l_.b + converted * l_.b_stage + imm(kTileM * kRow);
    k_.bulk_copy_to_cluster(at(from + remote_), at(from), bytes, at(partner_bar));
  });
}

// The cursor's load, if any item is left, then on to the next K block (of
// the CTA's next item past the last). In a cluster, B's rows of the CTA's
// rank (b_rows() of them) and their piece, at the rank's places.
void Converting::issue_load(Loads& l) {
  const tile::WorkItem& w = l.cursor.item();
  k_.if_then(l.cursor.valid(), [&] {
    Reg full = ws_->pipeline().full().address(l.stage);
    ws_->pipeline().expect_tx(full, raw_stage_bytes());
    load_raw(clustered() ? cluster_stage(l.stage, w.tile)
                         : raw_stage(l.stage, l_.raw, l_.raw_stage, l_.sf, l_.sf_stage, w.tile),
             full, w.tile, l.kb);
    k_.add(l.stage, l.stage, 1);
    k_.selp(l.stage, 0u, l.stage, l.stage == imm(t_.raw_stages));
    k_.add(l.kb, l.kb, 1);
    k_.if_then(l.kb == w.kb1, [&] {
      l.cursor.next();
      k_.mov(l.kb, w.kb0);
    });
  });
}

// Rank 1 loads B's second half, first in its raw stages (the two ranks'
// layouts: the file's head).
RawStage Converting::cluster_stage(const Reg& stage, const tile::Tile& t) {
  Reg raw = base_ + l_.raw + stage * l_.raw_stage, sf = base_ + l_.sf + stage * l_.sf_stage;
  Reg a_1st = a_first(), b_1st = a_1st ^ 1u;
  return {raw + b_1st * imm(b_rows() * raw_row_bytes()), raw + a_1st * imm(kTileM * raw_row_bytes()),
          sf + b_1st * imm(kScalePiece), sf + a_1st * imm(kScalePiece), t.n0 + rank_ * imm(b_rows())};
}

// The producer warpgroup converts its share of every stage and, in its
// first thread, keeps the raw stages loaded: all of them at the start, then
// one per conversion (mainloop_converting).
void Converting::producer(tile::WarpSpecialized& ws) {
  const ConvertRows rows = convert_rows(false);
  const auto& sched = dynamic_cast<const tile::TileScheduler&>(ws.source());
  Loads loads{sched.cursor(), k_.reg(u32), k_.mov(u32, 0u)};
  k_.mov(loads.kb, loads.cursor.item().kb0);
  k_.if_then(tid_ == imm(128 * kProducerWg), [&] {
    for (int i = 0; i < t_.raw_stages; ++i) issue_load(loads);
  });
  Reg stage = k_.mov(u32, 0), peer_phase = k_.mov(u32, 0);
  tile::PipelineState raw(k_, t_.raw_stages);
  Reg none = k_.mov(u64, 0u);
  ws.source().for_each([&](const tile::WorkItem& w) {
    mainloop_converting(nullptr, none, none, stage, &peer_phase, raw, rows, &loads, w);
  });
}

// The bf16 stages hold A's 128 rows, then B's (on a cluster's rank 1 B's,
// then A's): K-major 128-byte rows in 8-row atoms (SBO = one atom; LBO
// unused with the 128-byte swizzle, encoded as 16).
void Converting::consumer_setup(tile::WarpSpecialized& ws) {
  consumer_registers_setup(ws);
  Reg b_tiles = base_ + l_.b + imm(kTileM * kRow), a_tiles = base_ + l_.b;
  if (clustered()) {
    b_tiles = base_ + l_.b + a_first() * imm(kTileM * kRow);
    a_tiles = base_ + l_.b + (rank_ << imm(8 + 7));  // 256 rows of 128 bytes on rank 1
  }
  desc_b0_ = tile::warpgroup::smem_descriptor(k_, b_tiles, 16, kAtom);
  desc_a0_ = tile::warpgroup::smem_descriptor(k_, a_tiles + cw_ * (64 * kRow), 16, kAtom);
  rows_.emplace(convert_rows(true));
  stage_ = k_.mov(u32, 0);
}

}  // namespace

const Sm90aGemmAmaxDesign& converting_design() {
  // Three bf16 stages, four raw stages for FP4 (199 KB), three for FP8
  // (222 KB). 2-CTA clusters where asked, or by default for FP8 data where
  // M has two tiles or more: MXFP8 measured 7% faster at 8192^3 (H200), FP4
  // the same within 1% (docs/PERFORMANCE.md, session 8). Split-K measured
  // slower with these tiles than 128 x 128 (and the sums leave them no
  // registers).
  static const Sm90aGemmAmaxDesign d{
      .scheme = "converting warpgroups",
      .widths = {256},
      .pairs = true,
      .refuses = [](const GemmAmaxProblem&) -> std::optional<std::string> { return std::nullopt; },
      .tiling = [](const GemmAmaxProblem& p, int tile_n) {
        const bool fp8 = p.ab_dtype != DType::e2m1;
        Sm90aGemmAmaxTiling t{.tile_n = tile_n, .raw_stages = fp8 ? 3 : 4};
        if (p.cluster ? p.cluster->m == 2 && p.cluster->n == 1 : fp8 && p.m > kSm90aGemmAmaxTileM) t.cluster_m = 2;
        return t;
      }};
  return d;
}

ptx::Module build_converting(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) {
  Converting design(p, t);
  return tile::build_warp_specialized(design);
}

std::uint32_t converting_smem_bytes(DType ab, const Sm90aGemmAmaxTiling& t) { return layout(ab, t).bytes; }

}  // namespace warpforge::ops::sm90a_amax
