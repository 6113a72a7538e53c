// The sm90a GemmAmax design for E2M1 with dequantizer warpgroups
// (Sm90aGemmAmaxTiling::dequant_warpgroups 1 or 2; 128 x 128 and 128 x 64
// tiles): the producer's first thread TMA-loads each raw stage (the
// template's loads); the dequantizer warpgroups (the template's helpers,
// warpgroups 3 and 4) convert its B into `stages` bf16 stages, each row's
// 64 codes in the order of the consumers' A fragments; the consumers
// (warpgroups 0 and 1, 64 rows each) dequantize their rows' 16 consecutive
// codes of A per K block straight into wgmma's register-A fragments, then
// wgmma with B from the bf16 stages; K is permuted alike in both operands,
// which leaves the sum unchanged. setmaxnreg moves the producer's and the
// dequantizers' registers to the consumers.
//
// Barriers: the raw stages' (the template's pipeline: TMA bytes; freed by
// every dequantizer and consumer thread, which all read a raw stage) and
// the bf16 stages' (full: every dequantizer thread, after fence.proxy.async;
// empty: one arrival per consumer warpgroup).
#include "sm90a_gemm_amax_design.hpp"

namespace warpforge::ops::sm90a_amax {
namespace {

// bf16 B stages (tile_n rows of 128 bytes), raw stages (A's rows then B's),
// scale stages (SFA's piece then SFB's).
struct Layout {
  std::uint32_t b_stage, raw_stage, sf_stage;
  std::uint32_t b, raw, sf, raw_full, raw_empty, full, empty, amax, bytes;
};

Layout layout(DType ab, const Sm90aGemmAmaxTiling& t) {
  Layout l{};
  l.b_stage = static_cast<std::uint32_t>(t.tile_n) * kRow;
  l.raw_stage = static_cast<std::uint32_t>(kTileM + t.tile_n) * sm90a_gemm_amax_raw_row_bytes(ab, t);
  l.sf_stage = 2 * kScalePiece;
  tile::SharedLayout s;
  l.b = s.ring(l.b_stage, t.stages);
  l.raw = s.ring(l.raw_stage, t.raw_stages);
  l.sf = s.ring(l.sf_stage, t.raw_stages, 16);
  l.raw_full = s.mbarriers(t.raw_stages);
  l.raw_empty = s.mbarriers(t.raw_stages);
  l.full = s.mbarriers(t.stages);
  l.empty = s.mbarriers(t.stages);
  l.amax = s.buffer(8, 8);
  l.bytes = s.launch_bytes();
  return l;
}

class Dequantized final : public AmaxDesign {
 public:
  Dequantized(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) : AmaxDesign(p, t), l_(layout(p.ab_dtype, t)) {
    refuse_converting_only();
    if (!fp4())
      throw OpsError("sm90a gemm_amax kernel: " + std::string(runtime::name(p.ab_dtype)) +
                     " data with dequantizer warpgroups; FP8 takes fp8_mma or converting warpgroups, E2M1 "
                     "dequantizer or converting warpgroups");
    if (t.dequant_warpgroups < 1 || t.dequant_warpgroups > 2)
      throw OpsError("sm90a gemm_amax kernel: " + std::to_string(t.dequant_warpgroups) +
                     " dequantizer warpgroups; it takes 1 or 2");
    amax_slot_ = l_.amax;
  }

  // Every dequantizer and consumer thread reads a raw stage (B's rows, A's
  // rows), so each frees it.
  tile::WarpSpecializedConfig config() const override {
    tile::WarpSpecializedConfig c = raw_config(l_.raw_full, l_.raw_empty);
    c.helpers = t_.dequant_warpgroups;
    c.empty_arrivals = 128 * (t_.dequant_warpgroups + kConsumers);
    c.producer_registers = kProducerRegisters;
    c.helper_registers = kDequantRegisters;
    c.consumer_registers = consumer_registers(t_);
    return c;
  }
  void initialize(tile::WarpSpecialized& ws) override {
    AmaxDesign::initialize(ws);
    bf16_.emplace(ws.mbarriers(l_.full, t_.stages), ws.mbarriers(l_.empty, t_.stages));
    bf16_->init(128 * t_.dequant_warpgroups, kConsumers);
  }
  void load(const tile::LoadStep& s) override {
    load_raw(raw_stage(s.state.stage(), l_.raw, l_.raw_stage, l_.sf, l_.sf_stage, s.item.tile), s.full, s.item.tile,
             s.kb);
  }
  void helper(tile::WarpSpecialized& ws) override;
  void consumer_setup(tile::WarpSpecialized& ws) override;
  void mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& raw) override;

 private:
  void dequant_b(const ChunkMap& m, const Reg& raw, const Reg& dst, const std::vector<RowReads>& rows,
                 const std::vector<Reg>& stores, const std::vector<Reg>& scales, const Reg& kb);
  void dequant_a_fragments(const tile::PipelineState& raw, const Reg& kb, const Regs& out);
  // Row passes over the tile_n-row B tile (one, partly idle, when the tile
  // has fewer rows than a pass: tile_n 64 on one warpgroup).
  int passes(const ChunkMap& m) const { return std::max(1, t_.tile_n / m.row_step); }

  Layout l_;
  std::optional<tile::MbarrierPipeline> bf16_;  // the dequantizers' stages of B
  // The consumers': B's wgmma descriptor of bf16 stage 0, their ring of the
  // bf16 stages, and their two rows of A (r and r + 8) with the first code
  // of each K block they take.
  Reg desc_b0_;
  std::optional<tile::PipelineState> converted_;
  RowReads a_rows_[2];
  Reg code0_;
};

// Each raw stage carries its scales (the producer's loads): they are read
// from shared memory once the stage is full. Per row pass: the row's loads
// and its bf16 store address in a stage (pair o of the chunk goes to
// 16-byte chunk o % 8 before the swizzle, word 2c + o/8 — dequant_b; the
// row is 128-byte aligned and the chunk below 128, so the swizzle is an
// xor of the address).
void Dequantized::helper(tile::WarpSpecialized& ws) {
  const ChunkMap m = chunk_map(tid_ - imm(128 * (kProducerWg + 1)), 128 * t_.dequant_warpgroups, false);
  Reg code0 = m.c * imm(m.codes);
  std::vector<RowReads> rows;
  std::vector<Reg> stores;
  for (int i = 0; i < passes(m); ++i) {
    Reg row = m.row_in + imm(m.row_step * i);
    rows.push_back({row * raw_row_bytes() + (m.c << 4), scale_site(row, code0)});
    stores.push_back((row * kRow) | (m.swz << 4) | (m.c << 3));
  }
  tile::PipelineState raw(k_, t_.raw_stages), converted(k_, t_.stages);
  ws.source().for_each([&](const tile::WorkItem& w) {
    // A piece holds 128 rows: a 64-row tile is its first or second half.
    for (int i = 0; t_.tile_n < kTileM && i < passes(m); ++i)
      k_.mov(rows[static_cast<std::size_t>(i)].site,
             scale_site((w.tile.n0 & 127u) + m.row_in + imm(m.row_step * i), code0));
    k_.for_range(w.kb0, w.kb1, 1, [&](Reg kb) {
      ws.pipeline().wait(raw);
      // The consumers dequantize A themselves (dequant_a_fragments).
      Reg sf_stage = base_ + (l_.sf + kScalePiece) + raw.stage() * l_.sf_stage;
      std::vector<Reg> scales;
      for (const RowReads& row : rows) scales.push_back(scale_bytes(sf_stage, row, kb, m.scales));
      bf16_->acquire(converted);
      dequant_b(m, base_ + (l_.raw + kTileM * raw_row_bytes()) + raw.stage() * l_.raw_stage,
                base_ + l_.b + converted.stage() * l_.b_stage, rows, stores, scales, kb);
      // wgmma reads through the async proxy what these generic-proxy stores
      // wrote (PTX ISA 9.7.13.4 membar/fence, proxy fences).
      k_.fence_proxy_async_shared();
      ws.pipeline().release(raw.stage());
      bf16_->commit(converted.stage());
      ++raw;
      ++converted;
    });
  });
}

// B's stage: tile_n rows of one K block (64 codes) to bf16, with the scale
// bytes loaded (scale_bytes), each row's 64 codes in the order the consumers'
// register-A fragments take A's (dequant_a_fragments): pair q of the 32 at
// pair 8·((q/2) % 4) + 4·(q % 2) + q/8.
void Dequantized::dequant_b(const ChunkMap& m, const Reg& raw, const Reg& dst, const std::vector<RowReads>& rows,
                            const std::vector<Reg>& stores, const std::vector<Reg>& scales, const Reg& kb) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto pass = [&] {
      Regs w{k_.reg(b32), k_.reg(b32), k_.reg(b32), k_.reg(b32)};
      k_.ld(Space::shared, b32, w, at(raw + rows[i].raw));
      Regs out;
      for (int o = 0; o < m.codes / 2; ++o) out.push_back(k_.reg(b32));
      dequant_words(w, scales[i], m.scales, kb, m.c * imm(m.codes), out);
      // Pair o of chunk c (32 E2M1 codes) is pair q = 16c + o of the row:
      // pairs o and o + 8 are one 8-byte store.
      Reg first = dst + stores[i];
      for (int o = 0; o < 8; ++o)
        k_.st(Space::shared, b32, at(first ^ imm(o << 4)),
              Regs{out[static_cast<std::size_t>(o)], out[static_cast<std::size_t>(o + 8)]});
    };
    if (t_.tile_n < m.row_step)
      k_.if_then(m.row_in < imm(t_.tile_n), pass);
    else
      pass();
  }
}

// The thread's rows r = 16·warp + lane/4 and r + 8 of the warpgroup's 64,
// codes 16·(lane % 4) .. + 15 of each K block (8 bytes, one scale:
// dequant_a_fragments). B's bf16 stages are K-major 128-byte rows in 8-row
// atoms (SBO = one atom; LBO unused with the 128-byte swizzle, encoded as 16).
void Dequantized::consumer_setup(tile::WarpSpecialized& ws) {
  consumer_registers_setup(ws);
  desc_b0_ = tile::warpgroup::smem_descriptor(k_, base_ + l_.b, 16, kAtom);
  converted_.emplace(k_, t_.stages);
  Reg lane = tid_ & 31u;
  Reg row0 = cw_ * 64 + ((tid_ >> 5) & 3u) * 16 + (lane >> 2);  // in the tile
  code0_ = (lane & 3u) << 4;
  for (int h = 0; h < 2; ++h) {
    Reg row = row0 + imm(8 * h);
    a_rows_[h] = {row * raw_row_bytes() + ((lane & 3u) << 3), scale_site(row, code0_)};
  }
}

// This thread's A fragments for the four k16 steps of the raw stage (K
// block kb), dequantized into `out` (16 registers): rows a_rows_ (one
// 8-byte load and one scale each). Pair j of row h's 8 (dequant_fp4) is
// out[8h + j]. Step s's fragment (PTX ISA 9.7.15.5.1.1: row r, columns
// 2(lane%4) + {0,1}; row r + 8; then both at + 8) takes pairs 2s and
// 2s + 1 of each row: a row's pair 2s + e sits at wgmma positions 16s + 2t
// + 8e + {0,1} (t = lane % 4), the order the dequantizers store B's pairs
// in (dequant_b). Frees the raw stage.
void Dequantized::dequant_a_fragments(const tile::PipelineState& raw, const Reg& kb, const Regs& out) {
  ws_->pipeline().wait(raw);
  Reg codes = base_ + l_.raw + raw.stage() * l_.raw_stage;
  Reg sf_stage = base_ + l_.sf + raw.stage() * l_.sf_stage;
  for (int h = 0; h < 2; ++h) {
    Regs w;
    for (int j = 0; j < 2; ++j) w.push_back(k_.reg(b32));
    k_.ld(Space::shared, b32, w, at(codes + a_rows_[h].raw));
    dequant_words(w, scale_bytes(sf_stage, a_rows_[h], kb, 1), 1, kb, code0_,
                  Regs(out.begin() + 8 * h, out.begin() + 8 * h + 8));
  }
  ws_->pipeline().release(raw.stage());
}

// Per K block, the four k16 steps' wgmma m64n<tile_n>k16 take A from
// registers and B from the dequantizers' bf16 stage; the next block's A is
// dequantized while they run (two fragment sets, the loop taking two
// blocks per trip so that the sets trade roles without register moves).
void Dequantized::mainloop(tile::WarpSpecialized&, const tile::WorkItem& w, tile::PipelineState& raw) {
  const tile::warpgroup::KBlock block{.ab = bf16, .k_steps = kSm90aGemmAmaxTileK / 16};
  const Regs frags[2] = {k_.regs(b32, 16, "afrag"), k_.regs(b32, 16, "afrag_next")};
  dequant_a_fragments(raw, w.kb0, frags[0]);
  ++raw;
  auto step = [&](const Reg& kb, const Regs& now, const Regs& next) {
    bf16_->wait(*converted_);
    Reg db = stage_descriptor(desc_b0_, converted_->stage(), l_.b_stage);
    std::vector<Regs> a_steps;
    for (std::size_t i = 0; i < 8; i += 2) a_steps.push_back(Regs{now[i], now[8 + i], now[i + 1], now[8 + i + 1]});
    tile::warpgroup::mma_k_block(k_, block, acc_, a_steps, db, kb != w.kb0);
    k_.if_then(kb + 1u < w.kb1, [&] {
      dequant_a_fragments(raw, kb + 1u, next);
      ++raw;
    });
    k_.wgmma_wait_group(0);
    k_.if_then(leader_, [&] { bf16_->release(converted_->stage()); });
    ++*converted_;
  };
  k_.for_nonempty_range(w.kb0, w.kb1, 2, [&](Reg kb) {
    step(kb, frags[0], frags[1]);
    k_.if_then(kb + 1u < w.kb1, [&] { step(kb + 1u, frags[1], frags[0]); });
  });
}

}  // namespace

const Sm90aGemmAmaxDesign& dequantized_design() {
  // One dequantizer warpgroup, six bf16 B stages and six raw stages.
  static const Sm90aGemmAmaxDesign d{
      .scheme = "dequantizer warpgroups, A in register fragments",
      .widths = {128, 64},
      .splits = true,
      .refuses = [](const GemmAmaxProblem& p) -> std::optional<std::string> {
        if (p.ab_dtype != DType::e2m1) return "its dequantizer warpgroups take E2M1 data";
        return std::nullopt;
      },
      .tiling = [](const GemmAmaxProblem&, int tile_n) {
        return Sm90aGemmAmaxTiling{.tile_n = tile_n, .stages = 6, .raw_stages = 6, .dequant_warpgroups = 1};
      }};
  return d;
}

ptx::Module build_dequantized(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) {
  Dequantized design(p, t);
  return tile::build_warp_specialized(design);
}

std::uint32_t dequantized_smem_bytes(DType ab, const Sm90aGemmAmaxTiling& t) { return layout(ab, t).bytes; }

}  // namespace warpforge::ops::sm90a_amax
