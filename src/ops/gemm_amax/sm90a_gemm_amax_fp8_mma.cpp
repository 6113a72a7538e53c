// The sm90a GemmAmax kernel: MXFP8 as FP8 wgmma on the codes, each scale
// block's partial sum scaled in f32.
#include "sm90a_gemm_amax_builder.hpp"

namespace warpforge::ops::sm90a_amax {

// fp8_mma: once a raw stage is full, 96 threads write its scales as f32
// for the consumers (convert_scales); e8m0 E is 2^(E - 127) (the f32
// exponent field; E = 0 the subnormal 2^-127, E = 255 NaN: OCP MX v1.0,
// 5.4.1), 0 past K (TMA's zero fill there may meet a NaN of the layout's
// padding; rows past M or N need nothing: their accumulators are neither
// stored nor counted in amax).
void AmaxKernel::scale_converter() {
  Reg thread = tid_ - (128 * kProducerWg + 32);
  tile::PipelineState raw(k_, t_.raw_stages);
  for_each_tile([&](const TileCoords& t) {
    k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
      raw_->wait(raw);
      Reg out = base_ + smem_.scales + raw.stage() * smem_.scales_stage;
      convert_scales(true, base_ + smem_.raw_sfa + raw.stage() * smem_.sf_stage, out, t.m0, kTileM, kb, thread);
      convert_scales(false, base_ + smem_.raw_sfb + raw.stage() * smem_.sf_stage, out + imm(4 * 4 * kTileM), t.n0,
                     t_.tile_n, kb, thread);  // A's 4 blocks x 128 rows, then B's
      k_.mbarrier_arrive(at(ready_->address(raw.stage())));
      ++raw;
    });
  });
}

// The 4 scale blocks of each of the tile's rows (one 32-bit word of the
// piece: byte (r % 32)·16 + ((r / 32) % 4)·4 + block, the piece holding 128
// rows from a multiple of 128) into out[block·scale_block_floats + position(r)],
// the positions being what the consumers read with vector loads: A's rows r
// and r + 8 side by side (r % 16 < 8), and B's columns in lane order, the
// tile_rows/4 columns 8j + 2q + {0, 1} of lane quarter q together, the
// quarters kScalePad floats apart so that a warp's four 16-byte loads fall
// in different banks.
void AmaxKernel::convert_scales(bool a, const Reg& piece, const Reg& out, const Reg& first_row, int tile_rows,
                                const Reg& kb, const Reg& thread) {
  const std::int64_t blocks = (p_.k + p_.vec - 1) / p_.vec;
  k_.for_range(thread, imm(tile_rows), kScaleConverters, [&](Reg r) {
    Reg in_piece = (first_row & 127u) + r;
    Reg word = k_.reg(u32);
    k_.ld(Space::shared, u32, word, at(piece + ((in_piece & 31u) << 4) + (((in_piece >> 5) & 3u) << 2)));
    Reg position = a ? (r & ~15u) + ((r & 7u) << 1) + ((r >> 3) & 1u)
                     : ((r >> 1) & 3u) * imm(tile_rows / 4 + kScalePad) + ((r >> 3) << 1) + (r & 1u);
    for (int block = 0; block < 4; ++block) {
      Reg code = (word >> imm(8 * block)) & 0xffu, bits = k_.reg(u32);
      k_.mov(bits, code << 23);
      k_.selp(bits, bits | 0x00400000u, bits, (code - 1u) >= 254u);  // E = 0 or 255: mantissa bit 22
      // A stage's 4 blocks reach past K only where K ends inside it.
      if (p_.k % sm90a_gemm_amax_codes(t_) != 0) k_.selp(bits, bits, 0u, (kb << 2) + imm(block) < imm(blocks));
      k_.st(Space::shared, u32, at(out + (position << 2), 4 * scale_block_floats(a, tile_rows) * block), bits);
    }
  });
}

// fp8_mma: each scale block of a stage is one wgmma m64nNk32 on the FP8
// codes, in two halves of N (m64n(N/2)k32), each into a partial sum (scale-d
// 0); then acc += part x (sa x sb) per element: sa of the accumulator's row,
// sb of its column, both powers of two, so the product is exact while it
// stays in f32's range and one rounding follows. Steps (scale block, half)
// run as a software pipeline over the tile's whole K: step s + 1's wgmma
// (into the other of two partials) and its scales' loads are issued before
// step s's FMAs, so the FMAs wait for nothing but their own partial; the
// next stage's first step is issued from the current stage's last.
// Accumulator pair i is row 16·warp + lane/4 + 8·((i/2) % 2), columns
// 8·(i/4) + 2·(lane%4) + {0, 1} (PTX ISA 9.7.15.5.1.1): half h of N is
// acc[h·N/4 ..], and a partial (N/4 registers) holds one half.
void AmaxKernel::mainloop_fp8(const Regs& acc, const Regs (&part)[2], const Reg& desc_a0, const Reg& desc_b0,
                              tile::PipelineState& raw, const Pred& leader, const Reg& cw,
                              const TileCoords& t) {
  for (const Reg& a : acc) k_.mov(a, imm_f32(0.0f));
  const Type fp8 = p_.ab_dtype == DType::e4m3 ? e4m3 : e5m2;
  const std::size_t half_regs = part[0].size();
  constexpr int kSteps = 8;  // per raw stage: 4 scale blocks x 2 halves
  Reg lane = tid_ & 31u;
  // convert_scales' positions: the thread's rows r, r + 8 and its columns.
  Reg row_offset = (cw * 64 + ((tid_ >> 5) & 3u) * 16 + ((lane >> 2) << 1)) << 2;
  Reg col_offset = imm(4 * 4 * kTileM) + (lane & 3u) * imm(4 * (t_.tile_n / 4 + kScalePad));
  const Regs sa[2] = {k_.regs(f32, 2, "sa"), k_.regs(f32, 2, "sa_next")};
  const Regs sb[2] = {k_.regs(f32, half_regs / 2, "sb"), k_.regs(f32, half_regs / 2, "sb_next")};
  Reg da = k_.reg(u64), db = k_.reg(u64), scales = k_.reg(u32);
  // Waits for stage `stage` (its codes and its converted scales) and points
  // the descriptors and the scale base at it.
  auto enter_stage = [&] {
    raw_->wait(raw);
    k_.mbarrier_wait_parity(at(ready_->address(raw.stage())), raw.phase());
    k_.mov(da, stage_descriptor(desc_a0, raw.stage(), smem_.raw_stage));
    k_.mov(db, stage_descriptor(desc_b0, raw.stage(), smem_.raw_stage));
    k_.mov(scales, base_ + smem_.scales + raw.stage() * smem_.scales_stage);
  };
  // Step `step` of the current stage: its wgmma into part[step % 2] (32
  // codes: 32 bytes along the K-major rows; B's rows (N/2)·half..) and its
  // scales into register set step % 2.
  auto issue = [&](int step) {
    const int block = step / 2, half = step % 2;
    k_.wgmma_fence();
    k_.wgmma_mma_async(fp8, fp8, part[step % 2], da + static_cast<std::uint64_t>(2 * block),
                       db + static_cast<std::uint64_t>(2 * block + half * (t_.tile_n / 2) * 128 / 16), false,
                       WgmmaMajor::k, WgmmaMajor::k);
    k_.wgmma_commit_group();
    const Regs& b = sb[step % 2];
    k_.ld(Space::shared, f32, sa[step % 2], at(scales + row_offset, 4 * kTileM * block));
    for (std::size_t v = 0; v < b.size(); v += 4)
      k_.ld(Space::shared, f32,
            Regs(b.begin() + static_cast<std::ptrdiff_t>(v), b.begin() + static_cast<std::ptrdiff_t>(v + 4)),
            at(scales + col_offset,
               static_cast<std::int64_t>(4 * (scale_block_floats(false, t_.tile_n) * block + half * b.size() + v))));
  };
  auto accumulate = [&](int step) {
    const int half = step % 2;
    const Regs &p = part[step % 2], &row_scale = sa[step % 2], &col_scale = sb[step % 2];
    for (std::size_t r = 0; r < half_regs; ++r) {  // pair r / 2: row (r / 2) % 2, columns 2·(r / 4) + r % 2
      Reg scale = k_.reg(f32);
      k_.mul(scale, row_scale[(r / 2) % 2], col_scale[(r / 4) * 2 + r % 2]);
      const std::size_t a = half * half_regs + r;
      k_.fma(acc[a], p[r], scale, acc[a]);
    }
  };
  enter_stage();
  issue(0);
  k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
    for (int step = 0; step < kSteps; ++step) {
      if (step + 1 < kSteps) {
        issue(step + 1);
        k_.wgmma_wait_group(1);
        accumulate(step);
        continue;
      }
      // The last step: every wgmma of this stage is issued; once the last
      // is done the stage goes back to the producer, then the next stage's
      // first step goes out before this step's FMAs.
      k_.wgmma_wait_group(0);
      k_.if_then(leader, [&] { raw_->release(raw.stage()); });
      ++raw;
      k_.if_then(kb + 1u < t.kb1, [&] {
        enter_stage();
        issue(0);
      });
      accumulate(step);
    }
  });
}

}  // namespace warpforge::ops::sm90a_amax
