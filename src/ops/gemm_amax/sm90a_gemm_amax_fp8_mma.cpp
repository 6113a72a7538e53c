// The sm90a GemmAmax design for MXFP8 as FP8 wgmma on the codes
// (Sm90aGemmAmaxTiling::fp8_mma, GemmAmaxPrecision::fast; 128 x 128 and
// 128 x 64 tiles): the raw stages hold 128 codes of K in TMA's 128-byte
// swizzle, which the consumers' FP8 wgmma read; each 32-code scale block's
// partial sum is scaled and added in f32. The producer warpgroup's first
// thread loads the stages (the template's loads); its warps 1-3 turn each
// stage's scale pieces into f32 for the consumers (barrier `ready`). The
// consumers free a raw stage once its last wgmma completed.
#include "sm90a_gemm_amax_design.hpp"

namespace warpforge::ops::sm90a_amax {
namespace {

constexpr int kScaleConverters = 96;  // the producer warpgroup's warps 1-3
constexpr int kScalePad = 4;          // floats between B's lane quarters' scales
// Floats of one scale block's f32 scales: A's 128 rows, or B's tile_n
// columns in four padded lane quarters.
int scale_block_floats(bool a, int tile_rows) { return a ? tile_rows : tile_rows + 4 * kScalePad; }

// A raw stage is A's rows then B's (1024-aligned: 128-byte rows, tiles of
// 64 or 128 rows), a scale stage SFA's piece then SFB's, a scales stage
// A's 4 blocks x 128 rows of f32, then B's 4 x tile_n columns.
struct Layout {
  std::uint32_t raw_stage, sf_stage, scales_stage;
  std::uint32_t raw, sf, scales, raw_full, raw_empty, ready, amax, bytes;
};

Layout layout(const Sm90aGemmAmaxTiling& t) {
  Layout l{};
  l.raw_stage = static_cast<std::uint32_t>(kTileM + t.tile_n) * 128;
  l.sf_stage = 2 * kScalePiece;
  l.scales_stage = 4 * 4 * static_cast<std::uint32_t>(kTileM + scale_block_floats(false, t.tile_n));
  tile::SharedLayout s;
  l.raw = s.ring(l.raw_stage, t.raw_stages);
  l.sf = s.ring(l.sf_stage, t.raw_stages, 16);
  l.scales = s.ring(l.scales_stage, t.raw_stages, 16);
  l.raw_full = s.mbarriers(t.raw_stages);
  l.raw_empty = s.mbarriers(t.raw_stages);
  l.ready = s.mbarriers(t.raw_stages);
  l.amax = s.buffer(8, 8);
  l.bytes = s.launch_bytes();
  return l;
}

class Fp8Mma final : public AmaxDesign {
 public:
  Fp8Mma(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) : AmaxDesign(p, t), l_(layout(t)) {
    if (fp4())
      throw OpsError("sm90a gemm_amax kernel: " + std::string(runtime::name(p.ab_dtype)) +
                     " data with fp8_mma; FP8 takes fp8_mma or converting warpgroups, E2M1 dequantizer or "
                     "converting warpgroups");
    refuse_converting_only();
    amax_slot_ = l_.amax;
  }

  // setmaxnreg moves the producer's registers to the consumers: their loop
  // keeps two partials and two sets of scales beside the accumulators.
  tile::WarpSpecializedConfig config() const override {
    tile::WarpSpecializedConfig c = raw_config(l_.raw_full, l_.raw_empty);
    c.producer_registers = kProducerRegisters;
    c.consumer_registers = consumer_registers(t_);
    return c;
  }
  void initialize(tile::WarpSpecialized& ws) override {
    AmaxDesign::initialize(ws);
    ready_.emplace(ws.mbarriers(l_.ready, t_.raw_stages));
    for (int st = 0; st < t_.raw_stages; ++st) ready_->init(st, kScaleConverters);
  }
  void producer(tile::WarpSpecialized& ws) override {
    ws.load_stages();
    k_.if_then(tid_ >= 128 * kProducerWg + 32, [&] { scale_converter(); });
  }
  void load(const tile::LoadStep& s) override {
    load_raw(raw_stage(s.state.stage(), l_.raw, l_.raw_stage, l_.sf, l_.sf_stage, s.item.tile), s.full, s.item.tile,
             s.kb);
  }
  void consumer_setup(tile::WarpSpecialized& ws) override;
  void mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& raw) override;

 private:
  void scale_converter();
  void convert_scales(bool a, const Reg& piece, const Reg& out, const Reg& first_row, int tile_rows, const Reg& kb,
                      const Reg& thread);

  Layout l_;
  std::optional<tile::MbarrierArray> ready_;  // a raw stage's scales are f32
  Reg desc_a0_, desc_b0_;
  std::vector<Regs> part_;  // two partial sums, a half of N each
};

// Once a raw stage is full, 96 threads write its scales as f32 for the
// consumers (convert_scales); e8m0 E is 2^(E - 127) (the f32 exponent
// field; E = 0 the subnormal 2^-127, E = 255 NaN: OCP MX v1.0, 5.4.1), 0
// past K (TMA's zero fill there may meet a NaN of the layout's padding;
// rows past M or N need nothing: their accumulators are neither stored nor
// counted in amax).
void Fp8Mma::scale_converter() {
  Reg thread = tid_ - (128 * kProducerWg + 32);
  tile::PipelineState raw(k_, t_.raw_stages);
  ws_->source().for_each([&](const tile::WorkItem& w) {
    k_.for_range(w.kb0, w.kb1, 1, [&](Reg kb) {
      ws_->pipeline().wait(raw);
      Reg out = base_ + l_.scales + raw.stage() * l_.scales_stage;
      Reg pieces = base_ + l_.sf + raw.stage() * l_.sf_stage;
      convert_scales(true, pieces, out, w.tile.m0, kTileM, kb, thread);
      convert_scales(false, pieces + kScalePiece, out + imm(4 * 4 * kTileM), w.tile.n0, t_.tile_n, kb,
                     thread);  // A's 4 blocks x 128 rows, then B's
      ready_->arrive(raw.stage());
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
void Fp8Mma::convert_scales(bool a, const Reg& piece, const Reg& out, const Reg& first_row, int tile_rows,
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

// The raw stages' tiles are K-major 128-byte rows of codes: 8-row atoms
// (SBO = one atom; LBO unused with the 128-byte swizzle, encoded as 16).
void Fp8Mma::consumer_setup(tile::WarpSpecialized& ws) {
  consumer_registers_setup(ws);
  desc_b0_ = tile::warpgroup::smem_descriptor(k_, base_ + l_.raw + imm(kTileM * 128), 16, kAtom);
  desc_a0_ = tile::warpgroup::smem_descriptor(k_, base_ + l_.raw + cw_ * (64 * kRow), 16, kAtom);
  part_ = {k_.regs(f32, t_.tile_n / 4, "part"), k_.regs(f32, t_.tile_n / 4, "part_next")};
}

// Each scale block of a stage is one wgmma m64nNk32 on the FP8 codes, in
// two halves of N (m64n(N/2)k32), each into a partial sum (scale-d 0); then
// acc += part x (sa x sb) per element: sa of the accumulator's row, sb of
// its column, both powers of two, so the product is exact while it stays in
// f32's range and one rounding follows. Steps (scale block, half) run as a
// software pipeline over the tile's whole K: step s + 1's scales' loads and
// wgmma (into the other of two partials) are issued before step s's
// FMAs, so the FMAs wait for nothing but their own partial; the next
// stage's first step is issued from the current stage's last. Accumulator
// pair i is row 16·warp + lane/4 + 8·((i/2) % 2), columns 8·(i/4) +
// 2·(lane%4) + {0, 1} (PTX ISA 9.7.15.5.1.1): half h of N is acc[h·N/4 ..],
// and a partial (N/4 registers) holds one half.
void Fp8Mma::mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& raw) {
  for (const Reg& a : acc_) k_.mov(a, imm_f32(0.0f));
  const Type fp8 = p_.ab_dtype == DType::e4m3 ? e4m3 : e5m2;
  const tile::warpgroup::KBlock scale_block{.ab = fp8, .k_steps = 1};
  const std::size_t half_regs = part_[0].size();
  constexpr int kSteps = 8;  // per raw stage: 4 scale blocks x 2 halves
  Reg lane = tid_ & 31u;
  // convert_scales' positions: the thread's rows r, r + 8 and its columns.
  Reg row_offset = (cw_ * 64 + ((tid_ >> 5) & 3u) * 16 + ((lane >> 2) << 1)) << 2;
  Reg col_offset = imm(4 * 4 * kTileM) + (lane & 3u) * imm(4 * (t_.tile_n / 4 + kScalePad));
  const Regs sa[2] = {k_.regs(f32, 2, "sa"), k_.regs(f32, 2, "sa_next")};
  const Regs sb[2] = {k_.regs(f32, half_regs / 2, "sb"), k_.regs(f32, half_regs / 2, "sb_next")};
  Reg da = k_.reg(u64), db = k_.reg(u64), scales = k_.reg(u32);
  // Waits for the state's stage (its codes and its converted scales) and
  // points the descriptors and the scale base at it.
  auto enter_stage = [&] {
    ws.pipeline().wait(raw);
    ready_->wait(raw.stage(), raw.phase());
    k_.mov(da, stage_descriptor(desc_a0_, raw.stage(), l_.raw_stage));
    k_.mov(db, stage_descriptor(desc_b0_, raw.stage(), l_.raw_stage));
    k_.mov(scales, base_ + l_.scales + raw.stage() * l_.scales_stage);
  };
  // Step `step` of the current stage: its scales into register set
  // step % 2, then its wgmma into part[step % 2] (32 codes: 32 bytes along
  // the K-major rows; B's rows (N/2)·half..). The loads come first: one
  // thread frees the stage after its own warp's last wait, which follows
  // every warp's issue of the wgmma (PTX ISA 9.7.15.5: .sync.aligned over
  // the warpgroup), so only reads before the issue are ordered before it.
  auto issue = [&](int step) {
    const int block = step / 2, half = step % 2;
    const Regs& b = sb[step % 2];
    k_.ld(Space::shared, f32, sa[step % 2], at(scales + row_offset, 4 * kTileM * block));
    for (std::size_t v = 0; v < b.size(); v += 4)
      k_.ld(Space::shared, f32,
            Regs(b.begin() + static_cast<std::ptrdiff_t>(v), b.begin() + static_cast<std::ptrdiff_t>(v + 4)),
            at(scales + col_offset,
               static_cast<std::int64_t>(4 * (scale_block_floats(false, t_.tile_n) * block + half * b.size() + v))));
    tile::warpgroup::mma_k_block(k_, scale_block, part_[step % 2], da + static_cast<std::uint64_t>(2 * block),
                                 db + static_cast<std::uint64_t>(2 * block + half * (t_.tile_n / 2) * 128 / 16),
                                 false);
  };
  auto accumulate = [&](int step) {
    const int half = step % 2;
    const Regs &p = part_[step % 2], &row_scale = sa[step % 2], &col_scale = sb[step % 2];
    for (std::size_t r = 0; r < half_regs; ++r) {  // pair r / 2: row (r / 2) % 2, columns 2·(r / 4) + r % 2
      Reg scale = k_.reg(f32);
      k_.mul(scale, row_scale[(r / 2) % 2], col_scale[(r / 4) * 2 + r % 2]);
      const std::size_t a = half * half_regs + r;
      k_.fma(acc_[a], p[r], scale, acc_[a]);
    }
  };
  enter_stage();
  issue(0);
  k_.for_nonempty_range(w.kb0, w.kb1, 1, [&](Reg kb) {
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
      k_.if_then(leader_, [&] { ws.pipeline().release(raw.stage()); });
      ++raw;
      k_.if_then(kb + 1u < w.kb1, [&] {
        enter_stage();
        issue(0);
      });
      accumulate(step);
    }
  });
}

}  // namespace

const Sm90aGemmAmaxDesign& fp8_mma_design() {
  // FP8 wgmma on the codes is inexact (GemmAmaxPrecision): only when asked
  // for; FP8 data comes with e8m0 scales per 32 (check_support). Five raw
  // stages of 37 KB at 128 x 128, six of 28 KB at 128 x 64.
  static const Sm90aGemmAmaxDesign d{
      .scheme = "FP8 wgmma on the codes (precision fast)",
      .widths = {128, 64},
      .splits = true,
      .refuses = [](const GemmAmaxProblem& p) -> std::optional<std::string> {
        if (p.ab_dtype == DType::e2m1) return "its FP8 wgmma takes FP8 data";
        if (p.precision != GemmAmaxPrecision::fast)
          return "the sm90a kernel converts FP8 exactly only in 128x256 tiles (precision fast runs 128x128 and "
                 "128x64 on FP8 wgmma)";
        return std::nullopt;
      },
      .tiling = [](const GemmAmaxProblem&, int tile_n) {
        return Sm90aGemmAmaxTiling{.tile_n = tile_n, .raw_stages = tile_n == 128 ? 5 : 6, .fp8_mma = true};
      }};
  return d;
}

ptx::Module build_fp8_mma(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) {
  Fp8Mma design(p, t);
  return tile::build_warp_specialized(design);
}

std::uint32_t fp8_mma_smem_bytes(const Sm90aGemmAmaxTiling& t) { return layout(t).bytes; }

}  // namespace warpforge::ops::sm90a_amax
