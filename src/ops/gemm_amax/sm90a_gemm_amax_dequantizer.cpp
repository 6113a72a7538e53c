// The sm90a GemmAmax kernel: E2M1 with dequantizer warpgroups (B to bf16
// stages) and consumers that dequantize A into register-A fragments.
#include "sm90a_gemm_amax_builder.hpp"

namespace warpforge::ops::sm90a_amax {

// Each raw stage carries its scales (producer): they are read from shared
// memory once the stage is full.
void AmaxKernel::dequantizer() {
  k_.setmaxnreg_dec(kDequantRegisters);
  const ChunkMap m = chunk_map();
  // Per row pass: the row's loads and its bf16 store address in a stage
  // (pair o of the chunk goes to 16-byte chunk o % 8 before the swizzle,
  // word 2c + o/8 — dequant_b; the row is 128-byte aligned and the chunk
  // below 128, so the swizzle is an xor of the address).
  Reg code0 = m.c * imm(m.codes);
  std::vector<RowReads> rows;
  std::vector<Reg> stores;
  for (int i = 0; i < passes(m, t_.tile_n); ++i) {
    Reg row = m.row_in + imm(m.row_step * i);
    rows.push_back({row * raw_row_bytes() + (m.c << 4), scale_site(row, code0)});
    stores.push_back((row * kRow) | (m.swz << 4) | (m.c << 3));
  }
  tile::PipelineState raw(k_, t_.raw_stages), converted(k_, t_.stages);
  for_each_tile([&](const TileCoords& t) {
    // A piece holds 128 rows: a 64-row tile is its first or second half.
    for (int i = 0; t_.tile_n < kTileM && i < passes(m, t_.tile_n); ++i)
      k_.mov(rows[static_cast<std::size_t>(i)].site, scale_site((t.n0 & 127u) + m.row_in + imm(m.row_step * i), code0));
    k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
      raw_->wait(raw);
      // The consumers dequantize A themselves (dequant_a_fragments).
      Reg sf_stage = base_ + smem_.raw_sfb + raw.stage() * smem_.sf_stage;
      std::vector<Reg> scales;
      for (const RowReads& row : rows) scales.push_back(scale_bytes(sf_stage, row, kb, m.scales));
      bf16_->acquire(converted);
      dequant_b(m, base_ + smem_.raw_b + raw.stage() * smem_.raw_stage,
                base_ + smem_.b + converted.stage() * smem_.b_stage, rows, stores, scales, kb);
      // wgmma reads through the async proxy what these generic-proxy stores
      // wrote (PTX ISA 9.7.13.4 membar/fence, proxy fences).
      k_.fence_proxy_async_shared();
      raw_->release(raw.stage());
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
void AmaxKernel::dequant_b(const ChunkMap& m, const Reg& raw, const Reg& dst, const std::vector<RowReads>& rows,
                           const std::vector<Reg>& stores, const std::vector<Reg>& scales, const Reg& kb) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto pass = [&] {
      Regs w{k_.reg(b32), k_.reg(b32), k_.reg(b32), k_.reg(b32)};
      k_.ld(Space::shared, b32, w, at(raw + rows[i].raw));
      Regs out;
      for (int o = 0; o < m.codes / 2; ++o) out.push_back(k_.reg(b32));
      dequant_words(w, scales[i], m.scales, kb, m.c * imm(m.codes), out);
      // Pair o of chunk c (32 E2M1 codes) is pair q = 16c + o of the row:
      // pairs o and o + 8 are one 8-byte store (dequantizer()).
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

// This thread's A fragments for the four k16 steps of raw stage `rstage`
// (K block kb), dequantized into `out` (16 registers): rows a.rows (one
// 8-byte load and one scale each). Pair j of row h's 8 (dequant_fp4) is
// out[8h + j]. Step s's fragment (PTX ISA 9.7.15.5.1.1: row r, columns
// 2(lane%4) + {0,1}; row r + 8; then both at + 8) takes pairs 2s and
// 2s + 1 of each row: a row's pair 2s + e sits at wgmma positions 16s + 2t
// + 8e + {0,1} (t = lane % 4), the order the dequantizer stores B's pairs
// in (dequant_b). Frees the raw stage.
void AmaxKernel::dequant_a_fragments(const ARows& a, const tile::PipelineState& raw, const Reg& kb,
                                     const Regs& out) {
  raw_->wait(raw);
  Reg codes = base_ + smem_.raw_a + raw.stage() * smem_.raw_stage;
  Reg sf_stage = base_ + smem_.raw_sfa + raw.stage() * smem_.sf_stage;
  for (int h = 0; h < 2; ++h) {
    Regs w;
    for (int j = 0; j < 2; ++j) w.push_back(k_.reg(b32));
    k_.ld(Space::shared, b32, w, at(codes + a.rows[h].raw));
    dequant_words(w, scale_bytes(sf_stage, a.rows[h], kb, 1), 1, kb, a.code0, Regs(out.begin() + 8 * h, out.begin() + 8 * h + 8));
  }
  raw_->release(raw.stage());
}

// The dequantizer's formats: per K block, the four k16 steps' wgmma m64n<tile_n>k16 take A
// from registers and B from the dequantizer's bf16 stage; the next block's
// A is dequantized while they run (two fragment sets).
void AmaxKernel::mainloop_dequantized(const Regs& acc, const Reg& desc_b0, tile::PipelineState& converted,
                                     tile::PipelineState& raw, const Pred& leader, const ARows& a,
                                     const TileCoords& t) {
  const Regs frags[2] = {k_.regs(b32, 16, "afrag"), k_.regs(b32, 16, "afrag_next")};
  dequant_a_fragments(a, raw, t.kb0, frags[0]);
  ++raw;
  // K block kb's wgmma on fragments `now` while the next block's A goes
  // into `next`; the loop takes two blocks per trip so that the two sets
  // trade roles without register moves.
  auto block = [&](const Reg& kb, const Regs& now, const Regs& next) {
    bf16_->wait(converted);
    Reg db = stage_descriptor(desc_b0, converted.stage(), smem_.b_stage);
    Pred accumulate = kb != t.kb0;
    k_.wgmma_fence();
    for (int s = 0; s < kSm90aGemmAmaxTileK / 16; ++s) {
      const auto i = static_cast<std::size_t>(2 * s);
      // Each k16 step moves 32 bytes along the K-major rows.
      k_.wgmma_mma_async(bf16, bf16, acc, Regs{now[i], now[8 + i], now[i + 1], now[8 + i + 1]},
                         db + static_cast<std::uint64_t>(2 * s), s == 0 ? std::variant<bool, PredUse>(accumulate) : true,
                         WgmmaMajor::k);
    }
    k_.wgmma_commit_group();
    k_.if_then(kb + 1u < t.kb1, [&] {
      dequant_a_fragments(a, raw, kb + 1u, next);
      ++raw;
    });
    k_.wgmma_wait_group(0);
    k_.if_then(leader, [&] { bf16_->release(converted.stage()); });
    ++converted;
  };
  k_.for_nonempty_range(t.kb0, t.kb1, 2, [&](Reg kb) {
    block(kb, frags[0], frags[1]);
    k_.if_then(kb + 1u < t.kb1, [&] { block(kb + 1u, frags[1], frags[0]); });
  });
}

}  // namespace warpforge::ops::sm90a_amax
