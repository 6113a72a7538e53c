#include "sm90a_gemm_amax_kernel.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {

constexpr std::uint32_t kRow = 128;        // bytes per swizzled bf16 row (128-byte swizzle)
constexpr std::uint32_t kAtom = 8 * kRow;  // 8 rows: the swizzle pattern's repeat
constexpr int kTileM = kSm90aGemmAmaxTileM;
constexpr int kGroupRows = 16;  // output tiles per group along M, for L2 reuse
constexpr int kConsumers = 2;
constexpr int kProducerWg = 2, kDequantWg0 = 3;  // then t_.dequant_warpgroups of them
constexpr int kScaleConverters = 96;             // fp8_mma: the producer warpgroup's warps 1-3
constexpr int kScalePad = 4;                     // fp8_mma: floats between B's lane quarters' scales
// fp8_mma: floats of one scale block's f32 scales: A's 128 rows, or B's
// tile_n columns in four padded lane quarters.
int scale_block_floats(bool a, int tile_rows) { return a ? tile_rows : tile_rows + 4 * kScalePad; }

std::uint32_t imm(std::int64_t v) { return static_cast<std::uint32_t>(v); }

// The setmaxnreg split of the CTA's registers: the entry's count (65536 per
// SM over the threads, a multiple of 8) for every thread, given back by the
// producer warpgroup (to 40) and the dequantizers (to kDequantRegisters),
// taken by the two consumer warpgroups (at most 232).
constexpr int kProducerRegisters = 40, kDequantRegisters = 64;
int consumer_registers(const Sm90aGemmAmaxTiling& t) {
  const int threads = sm90a_gemm_amax_threads(t);
  const int pool = 65536 / threads / 8 * 8 * threads;
  const int dequantizers = t.fp8_mma ? 0 : t.dequant_warpgroups;
  const int left = pool - 128 * kProducerRegisters - 128 * dequantizers * kDequantRegisters;
  return std::min(232, left / 256 / 8 * 8);
}

// A unit of work: an output tile (its index among all L batches' tiles)
// and, with split-K, one of its K ranges: K blocks kb0 .. kb1 - 1.
struct TileCoords {
  Reg m0, n0, batch, tile, split, kb0, kb1;
};

class AmaxKernel {
 public:
  AmaxKernel(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t)
      : p_(p), t_(t), smem_(sm90a_gemm_amax_smem(p.ab_dtype, t)), k_(sm90a_gemm_amax_name(p, t), Target::sm_90a) {
    // The converting warpgroups split 128 + 256 rows evenly over their 384
    // threads; an m64n256 accumulator fits only such a CTA (ptxas budget).
    const bool wide = t.tile_n == 256;
    if (t.tile_n != 64 && t.tile_n != 128 && t.tile_n != 256)
      throw OpsError("sm90a gemm_amax kernel: tile_n " + std::to_string(t.tile_n) + "; it takes 64, 128 or 256");
    if (converting() && (!wide || t.stages != 3 || t.splits != 1))
      throw OpsError("sm90a gemm_amax kernel: tile_n " + std::to_string(t.tile_n) + ", " + std::to_string(t.stages) +
                     " stages, " + std::to_string(t.splits) +
                     " K splits with converting warpgroups; they take tile_n 256, 3 stages and no split");
    if (wide && !converting())
      throw OpsError("sm90a gemm_amax kernel: tile_n 256 takes converting warpgroups (no fp8_mma, no dequantizer warpgroups)");
    // fp8_mma takes FP8 (MXFP8 only), the dequantizer warpgroups E2M1; the
    // converting warpgroups both.
    if ((fp4() && t.fp8_mma) || (!fp4() && !t.fp8_mma && !converting()))
      throw OpsError("sm90a gemm_amax kernel: " + std::string(runtime::name(p.ab_dtype)) + " data with " +
                     (t.fp8_mma ? "fp8_mma" : "dequantizer warpgroups") +
                     "; FP8 takes fp8_mma or converting warpgroups, E2M1 dequantizer or converting warpgroups");
    tiles_m_ = (p.m + kTileM - 1) / kTileM;
    const std::int64_t tiles_n = (p.n + t.tile_n - 1) / t.tile_n;
    per_batch_ = tiles_m_ * tiles_n;
    group_span_ = tiles_n * kGroupRows;
    kblocks_ = (p.k + sm90a_gemm_amax_codes(t) - 1) / sm90a_gemm_amax_codes(t);
    split_kblocks_ = (kblocks_ + t.splits - 1) / t.splits;
    if (t.splits < 1 || (t.splits - 1) * split_kblocks_ >= kblocks_)
      throw OpsError("sm90a gemm_amax kernel: " + std::to_string(t.splits) + " K splits of " +
                     std::to_string(kblocks_) + " K blocks; every split needs at least one");
  }

  ptx::Module build();

 private:
  TileCoords tile_of(const Reg& unit);
  void for_each_tile(const std::function<void(const TileCoords&)>& body);
  Reg barrier(std::uint32_t offset, const Reg& stage) { return base_ + offset + (stage << 3); }
  bool fp4() const { return p_.ab_dtype == DType::e2m1; }
  // The consumers convert both operands (no dequantizer warpgroup).
  bool converting() const { return !t_.fp8_mma && t_.dequant_warpgroups == 0; }
  std::uint32_t raw_row_bytes() const { return sm90a_gemm_amax_raw_row_bytes(p_.ab_dtype, t_); }
  void advance(const Reg& stage, const Reg& phase, int stages);
  void producer();
  void scale_converter();
  void convert_scales(bool a, const Reg& piece, const Reg& out, const Reg& first_row, int tile_rows,
                      const Reg& kb, const Reg& thread);
  void dequantizer();
  // Which raw chunks a converting thread (a dequantizer or converting warpgroup's) takes.
  struct ChunkMap {
    int chunks, codes, row_step, scales;  // chunks per row, codes per chunk, rows per pass, scales per chunk
    Reg c, row_in, swz;                   // the thread's chunk, first row, row % 8
  };
  ChunkMap chunk_map();
  // One row of an operand tile that a thread dequantizes: what its loads
  // need that the K loop does not change.
  struct RowReads {
    Reg raw;   // byte offset of the thread's codes in a raw stage
    Reg site;  // its first scale's byte in a stage's piece (scale_site)
  };
  Reg scale_site(const Reg& piece_row, const Reg& code0);
  // A row's scales in K block kb: `count` bytes (1, or 2 with 32 codes of
  // vec 16) as loaded (scale_bytes), whether all of a set fold
  // (scales_fold), and the bf16x2 multipliers dequant_fp4 takes
  // (scale_factors).
  Reg scale_bytes(const Reg& sf_stage, const RowReads& row, const Reg& kb, int count);
  Pred scales_fold(const std::vector<Reg>& bytes, int count);
  Regs scale_factors(const Reg& bytes, int count, const Reg& kb, const Reg& code0, bool folded);
  Reg decode_scale(const Reg& e, int byte, int bytes);
  void dequant_b(const ChunkMap& m, const Reg& raw, const Reg& dst, const std::vector<RowReads>& rows,
                 const std::vector<Reg>& stores, const std::vector<Reg>& scales, const Reg& kb);
  void dequant_words(const Regs& w, const Reg& bytes, int count, const Reg& kb, const Reg& code0, const Regs& out);
  // Row passes over a tile_rows-row operand tile (one, partly idle, when the
  // tile has fewer rows than a pass: FP4 at tile_n 64).
  int passes(const ChunkMap& m, int tile_rows) const { return std::max(1, tile_rows / m.row_step); }
  // The power of two a code's bit move into bf16's fields leaves out: 2^126
  // for E2M1 (bias 1), 2^120 for e4m3 (bias 7), 2^112 for e5m2 (bias 15).
  int unbias_exponent() const { return p_.ab_dtype == DType::e2m1 ? 126 : p_.ab_dtype == DType::e4m3 ? 120 : 112; }
  void apply_scale(const Reg& d, const Reg& y, const Reg& factor2, bool folded);
  void dequant_fp4(const Regs& w, const Regs& factor2, const Regs& out, bool folded);
  void dequant_fp8(const Regs& w, const Reg& factor2, const Regs& out, bool folded);
  Pred codes_finite(const std::vector<Regs>& words);
  void consumer();
  // Converting warpgroups: the rows a thread converts per K block, m.row_step
  // apart through the stage's 128 + tile_n (A's, then B's). The raw offset
  // and store of each are the first's plus constants (convert_rows).
  struct ConvertRows {
    Reg raw;                 // the first row's codes in a raw stage
    std::vector<Reg> sites;  // each row's first scale byte in a scale stage
    Reg store;               // the first row's first 16-byte chunk in a bf16 stage, before the xor of chunk q
  };
  ConvertRows convert_rows(const ChunkMap& m);
  void convert_stage(const ChunkMap& m, const ConvertRows& rows, const Reg& rstage, const Reg& rphase, const Reg& kb,
                     const Reg& cstage);
  // One thread's TMA loads, run ahead of the converting warpgroups
  // (issue_load): the next unit and K block to load and its raw stage.
  struct LoadCursor {
    Reg unit, kb, kb1, m0, n0, batch, stage;
  };
  void load_stage(const Reg& m0, const Reg& n0, const Reg& batch, const Reg& kb, const Reg& stage);
  LoadCursor load_cursor();
  void issue_load(LoadCursor& c);
  // The converting warpgroups' K loop over one unit: with `acc`, a
  // consumer's (wgmma), without, the helper warpgroup's (conversion only;
  // its first thread issues the TMA loads).
  void mainloop_converting(const Regs* acc, const Reg& desc_a0, const Reg& desc_b0, const Reg& stage,
                           const Reg& rstage, const Reg& rphase, const ChunkMap& m, const ConvertRows& rows,
                           LoadCursor* loads, const TileCoords& t);
  void converting_helper();
  Reg stage_descriptor(const Reg& desc0, const Reg& stage, std::uint32_t stage_bytes);
  // The consumer thread's two rows of A (r and r + 8) and its first code in each K block.
  struct ARows {
    RowReads rows[2];
    Reg code0;
  };
  void dequant_a_fragments(const ARows& a, const Reg& rstage, const Reg& rphase, const Reg& kb, const Regs& out);
  void mainloop_dequantized(const Regs& acc, const Reg& desc_b0, const Reg& stage, const Reg& phase,
                           const Reg& rstage, const Reg& rphase, const Pred& leader, const ARows& a,
                           const TileCoords& t);
  void mainloop_fp8(const Regs& acc, const Regs (&part)[2], const Reg& desc_a0, const Reg& desc_b0,
                    const Reg& stage, const Reg& phase, const Pred& leader, const Reg& cw, const TileCoords& t);
  void epilogue(const Regs& acc, const TileCoords& t, const Reg& cw, const Reg& thread_max);
  void finish_tile(const Regs& acc, const TileCoords& t, const Reg& cw, const Reg& thread_max);
  Reg partial_index(const TileCoords& t, const Reg& split, const Reg& cw);
  Reg partial_slot(const TileCoords& t, const Reg& split, const Reg& cw);
  Reg partial_flag(const TileCoords& t, const Reg& split, const Reg& cw);
  void store_pair(const Reg& v0, const Reg& v1, const Reg& address, std::int64_t offset, const Pred& in0,
                  const Pred& in1);

  const GemmAmaxProblem& p_;
  Sm90aGemmAmaxTiling t_;
  Sm90aGemmAmaxSmem smem_;
  Kernel k_;
  std::int64_t tiles_m_, per_batch_, group_span_, kblocks_, split_kblocks_;
  ParamRef map_a_p_, map_b_p_, map_sfa_p_, map_sfb_p_;
  Reg map_a_, map_b_, map_sfa_, map_sfb_, c_, amax_, workspace_;
  Reg base_, tid_;
};

ptx::Module AmaxKernel::build() {
  // setmaxnreg moves the producer's and the dequantizers' registers to the
  // consumers (consumer_registers): fp8_mma's loop keeps two partials and
  // two sets of scales beside the accumulators, the dequantizer's consumers
  // two sets of A fragments.
  k_.maxntid(sm90a_gemm_amax_threads(t_));
  k_.minnctapersm(1);  // a register cap at entry, which setmaxnreg needs
  map_a_p_ = k_.param_bytes("map_a", 128, 64);
  map_b_p_ = k_.param_bytes("map_b", 128, 64);
  map_sfa_p_ = k_.param_bytes("map_sfa", 128, 64);
  map_sfb_p_ = k_.param_bytes("map_sfb", 128, 64);
  c_ = k_.param_ptr("C", runtime::bits(p_.c_dtype) / 8);
  amax_ = k_.param_ptr("amax", 4);
  if (t_.splits > 1) workspace_ = k_.param(u64, "workspace");
  Shared smem = k_.dynamic_shared("smem", 1024);
  // The 128-byte swizzle is a function of address bits 4-9: the bf16 tiles
  // start on 1024-byte boundaries so that the dequantizer's swizzled writes
  // and wgmma's reads agree.
  base_ = (k_.address_of(smem) + 1023) & 0xFFFFFC00u;
  tid_ = k_.sreg(SReg::tid_x);
  map_a_ = k_.param_generic_address(map_a_p_);
  map_b_ = k_.param_generic_address(map_b_p_);
  map_sfa_ = k_.param_generic_address(map_sfa_p_);
  map_sfb_ = k_.param_generic_address(map_sfb_p_);
  k_.if_then(tid_ == 0, [&] {
    for (const Reg& map : {map_a_, map_b_, map_sfa_, map_sfb_}) k_.prefetch_tensormap(map);
    // fp8_mma: a raw stage is freed by the consumers' wgmma and made ready
    // by the scale converters; otherwise the dequantizers free it.
    for (int st = 0; st < t_.raw_stages; ++st) {
      k_.mbarrier_init(at(base_, smem_.raw_full + 8 * st), 1);
      // Without fp8_mma every consumer thread reads A's codes too. The
      // converting scheme's barrier per K block frees raw stages.
      if (!converting())
        k_.mbarrier_init(at(base_, smem_.raw_empty + 8 * st),
                         t_.fp8_mma ? kConsumers : 128 * (t_.dequant_warpgroups + kConsumers));
      if (t_.fp8_mma) k_.mbarrier_init(at(base_, smem_.ready + 8 * st), kScaleConverters);
    }
    for (int st = 0; !t_.fp8_mma && !converting() && st < t_.stages; ++st) {
      k_.mbarrier_init(at(base_, smem_.full + 8 * st), 128 * t_.dequant_warpgroups);
      k_.mbarrier_init(at(base_, smem_.empty + 8 * st), kConsumers);
    }
    k_.st(Space::shared, u32, at(base_, smem_.amax), 0u);
    k_.fence_mbarrier_init();
  });
  k_.bar_sync(0);
  Reg wg = tid_ >> 7;
  k_.if_else(
      wg == kProducerWg,
      [&] {
        if (converting()) return converting_helper();
        k_.setmaxnreg_dec(kProducerRegisters);
        producer();
        if (t_.fp8_mma) k_.if_then(tid_ >= 128 * kProducerWg + 32, [&] { scale_converter(); });
      },
      [&] {
        if (t_.fp8_mma || converting()) return consumer();
        k_.if_else(wg >= kDequantWg0, [&] { dequantizer(); }, [&] { consumer(); });
      });
  return k_.module();
}

// Output tiles in groups of kGroupRows along M, N-major inside a group,
// batch outermost (the bf16 sm90a kernel's order).
// Unit u is split u % splits of tile u / splits: a tile's splits run on
// neighbouring CTAs, at the same time.
TileCoords AmaxKernel::tile_of(const Reg& work) {
  Reg unit = work, split = k_.mov(u32, 0u);
  if (t_.splits > 1) {
    k_.rem(split, work, imm(t_.splits));
    unit = k_.reg(u32);
    k_.div(unit, work, imm(t_.splits));
  }
  Reg kb0 = split * imm(split_kblocks_), kb1 = k_.reg(u32);
  k_.min(kb1, kb0 + imm(split_kblocks_), imm(kblocks_));
  Reg batch = k_.reg(u32), group = k_.reg(u32), rows = k_.reg(u32), mu = k_.reg(u32), nt = k_.reg(u32);
  k_.div(batch, unit, imm(per_batch_));
  Reg r = unit - batch * imm(per_batch_);
  k_.div(group, r, imm(group_span_));
  Reg first = group * kGroupRows;
  k_.min(rows, k_.mov(u32, imm(tiles_m_)) - first, kGroupRows);
  Reg within = r - group * imm(group_span_);
  k_.rem(mu, within, rows);
  k_.div(nt, within, rows);
  return {(first + mu) * kTileM, nt * imm(t_.tile_n), batch, unit, split, kb0, kb1};
}

void AmaxKernel::for_each_tile(const std::function<void(const TileCoords&)>& body) {
  Reg unit = k_.mov(u32, SReg::ctaid_x);
  Reg step = k_.sreg(SReg::nctaid_x);
  k_.while_loop([&] { return unit < imm(per_batch_ * p_.l * t_.splits); },
                [&] {
                  body(tile_of(unit));
                  k_.add(unit, unit, step);
                });
}

void AmaxKernel::advance(const Reg& stage, const Reg& phase, int stages) {
  k_.add(stage, stage, 1);
  Pred wrap = stage == stages;
  k_.selp(stage, 0, stage, wrap);
  Reg flip = k_.reg(u32);
  k_.selp(flip, 1, 0, wrap);
  k_.xor_(phase, phase, flip);
}

// One thread issues every TMA load (load_stage): a K-major box of one K
// block's bytes (64 E2M1 codes, 32 bytes, or 128 FP8 codes with fp8_mma) x
// rows per operand, and the 512-byte piece of each scale tensor that holds
// the tile's 128 rows x 4 scale blocks around this K block (the 128x4
// layout keeps them together); zero-filled bytes past the tensor count
// toward the transaction bytes. Slots start empty: waiting for the parity
// before the first phase succeeds at once (PTX ISA 9.7.13.15.16,
// try_wait.parity).
void AmaxKernel::producer() {
  k_.if_then(tid_ == 128 * kProducerWg, [&] {
    Reg stage = k_.mov(u32, 0), phase = k_.mov(u32, 0);
    for_each_tile([&](const TileCoords& t) {
      k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
        k_.mbarrier_wait_parity(at(barrier(smem_.raw_empty, stage)), phase ^ 1);
        load_stage(t.m0, t.n0, t.batch, kb, stage);
        advance(stage, phase, t_.raw_stages);
      });
    });
  });
}

void AmaxKernel::load_stage(const Reg& m0, const Reg& n0, const Reg& batch, const Reg& kb, const Reg& stage) {
  Reg full = barrier(smem_.raw_full, stage);
  k_.mbarrier_arrive_expect_tx(at(full), (kTileM + t_.tile_n) * raw_row_bytes() +
                                             (1 + sm90a_gemm_amax_sfb_pieces(t_)) * kScalePiece);
  Reg kx = kb * raw_row_bytes();  // bytes along K
  k_.tma_load(at(base_ + smem_.raw_a + stage * smem_.raw_stage), map_a_, {kx, m0, batch}, at(full));
  k_.tma_load(at(base_ + smem_.raw_b + stage * smem_.raw_stage), map_b_, {kx, n0, batch}, at(full));
  // Piece (batch, row tile, K group) is rows 2·piece, 2·piece + 1 of the
  // scale bytes seen as 256-byte rows. A stage's codes are 2 or 4 scale
  // blocks (64 codes of vec 32, or 16; 128 of vec 32 with fp8_mma): a piece
  // holds 4.
  Reg group = (kb * imm(sm90a_gemm_amax_codes(t_) / p_.vec)) >> 2u;
  const ScaleFactorLayout sfa{p_.m, p_.k, p_.l, p_.vec}, sfb{p_.n, p_.k, p_.l, p_.vec};
  Reg piece_a = (batch * imm(sfa.row_tiles()) + (m0 >> 7)) * imm(sfa.k_tiles()) + group;
  Reg piece_b = (batch * imm(sfb.row_tiles()) + (n0 >> 7)) * imm(sfb.k_tiles()) + group;
  k_.tma_load(at(base_ + smem_.raw_sfa + stage * smem_.sf_stage), map_sfa_, {0u, piece_a << 1}, at(full));
  // A 256-row B tile takes the pieces of two row tiles (past N: zero fill,
  // or the next batch's scales, for sums nobody stores).
  for (int i = 0; i < sm90a_gemm_amax_sfb_pieces(t_); ++i)
    k_.tma_load(at(base_ + smem_.raw_sfb + stage * smem_.sf_stage, i * kScalePiece), map_sfb_,
                {0u, (piece_b + imm(i * sfb.k_tiles())) << 1}, at(full));
}

// Converting warpgroups: the first unit of the CTA, its first K block, raw stage 0.
AmaxKernel::LoadCursor AmaxKernel::load_cursor() {
  LoadCursor c{k_.mov(u32, SReg::ctaid_x), k_.reg(u32), k_.reg(u32), k_.reg(u32), k_.reg(u32), k_.reg(u32),
               k_.mov(u32, 0u)};
  k_.if_then(c.unit < imm(per_batch_ * p_.l * t_.splits), [&] {
    const TileCoords t = tile_of(c.unit);
    for (auto [to, from] : {std::pair{c.kb, t.kb0}, {c.kb1, t.kb1}, {c.m0, t.m0}, {c.n0, t.n0}, {c.batch, t.batch}})
      k_.mov(to, from);
  });
  return c;
}

// The cursor's load, if any unit is left, then on to the next K block
// (of the CTA's next unit past the last).
void AmaxKernel::issue_load(LoadCursor& c) {
  const std::int64_t units = per_batch_ * p_.l * t_.splits;
  k_.if_then(c.unit < imm(units), [&] {
    load_stage(c.m0, c.n0, c.batch, c.kb, c.stage);
    k_.add(c.stage, c.stage, 1);
    k_.selp(c.stage, 0u, c.stage, c.stage == imm(t_.raw_stages));
    k_.add(c.kb, c.kb, 1);
    k_.if_then(c.kb == c.kb1, [&] {
      k_.add(c.unit, c.unit, k_.sreg(SReg::nctaid_x));
      k_.if_then(c.unit < imm(units), [&] {
        const TileCoords t = tile_of(c.unit);
        for (auto [to, from] : {std::pair{c.kb, t.kb0}, {c.kb1, t.kb1}, {c.m0, t.m0}, {c.n0, t.n0}, {c.batch, t.batch}})
          k_.mov(to, from);
      });
    });
  });
}

// fp8_mma: once a raw stage is full, 96 threads write its scales as f32
// for the consumers (convert_scales); e8m0 E is 2^(E - 127) (the f32
// exponent field; E = 0 the subnormal 2^-127, E = 255 NaN: OCP MX v1.0,
// 5.4.1), 0 past K (TMA's zero fill there may meet a NaN of the layout's
// padding; rows past M or N need nothing: their accumulators are neither
// stored nor counted in amax).
void AmaxKernel::scale_converter() {
  Reg thread = tid_ - (128 * kProducerWg + 32);
  Reg stage = k_.mov(u32, 0), phase = k_.mov(u32, 0);
  for_each_tile([&](const TileCoords& t) {
    k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
      k_.mbarrier_wait_parity(at(barrier(smem_.raw_full, stage)), phase);
      Reg out = base_ + smem_.scales + stage * smem_.scales_stage;
      convert_scales(true, base_ + smem_.raw_sfa + stage * smem_.sf_stage, out, t.m0, kTileM, kb, thread);
      convert_scales(false, base_ + smem_.raw_sfb + stage * smem_.sf_stage, out + imm(4 * 4 * kTileM), t.n0, t_.tile_n,
                     kb, thread);  // A's 4 blocks x 128 rows, then B's
      k_.mbarrier_arrive(at(barrier(smem_.ready, stage)));
      advance(stage, phase, t_.raw_stages);
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
  Reg rstage = k_.mov(u32, 0), rphase = k_.mov(u32, 0), stage = k_.mov(u32, 0), phase = k_.mov(u32, 0);
  for_each_tile([&](const TileCoords& t) {
    // A piece holds 128 rows: a 64-row tile is its first or second half.
    for (int i = 0; t_.tile_n < kTileM && i < passes(m, t_.tile_n); ++i)
      k_.mov(rows[static_cast<std::size_t>(i)].site, scale_site((t.n0 & 127u) + m.row_in + imm(m.row_step * i), code0));
    k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
      k_.mbarrier_wait_parity(at(barrier(smem_.raw_full, rstage)), rphase);
      // The consumers dequantize A themselves (dequant_a_fragments).
      Reg sf_stage = base_ + smem_.raw_sfb + rstage * smem_.sf_stage;
      std::vector<Reg> scales;
      for (const RowReads& row : rows) scales.push_back(scale_bytes(sf_stage, row, kb, m.scales));
      k_.mbarrier_wait_parity(at(barrier(smem_.empty, stage)), phase ^ 1);
      dequant_b(m, base_ + smem_.raw_b + rstage * smem_.raw_stage, base_ + smem_.b + stage * smem_.b_stage, rows,
                stores, scales, kb);
      // wgmma reads through the async proxy what these generic-proxy stores
      // wrote (PTX ISA 9.7.13.4 membar/fence, proxy fences).
      k_.fence_proxy_async_shared();
      k_.mbarrier_arrive(at(barrier(smem_.raw_empty, rstage)));
      k_.mbarrier_arrive(at(barrier(smem_.full, stage)));
      advance(rstage, rphase, t_.raw_stages);
      advance(stage, phase, t_.stages);
    });
  });
}

// Scale bytes of the 128x4 layout (REFERENCE.md): the 4 scale blocks of row
// r in a stage's 512-byte piece are the word at (r % 32)·16 + ((r / 32) % 4)·4.
// A thread whose codes start at code `code0` of each K block (64 codes)
// reads block (64·kb + code0) / vec, byte (code0 / vec) % 4 of the word
// (plus 2 in odd K blocks when vec is 32: row_scales). Tiles start on
// multiples of 128 rows, so the site depends on the row in the piece
// (the tile's row, or 64 past it in a 64-row tile's second half) alone.
Reg AmaxKernel::scale_site(const Reg& piece_row, const Reg& code0) {
  return ((piece_row & 31u) << 4) + (((piece_row >> 5) & 3u) << 2) + ((code0 >> imm(p_.vec == 16 ? 4 : 5)) & 3u);
}

// The `count` scale bytes of `row`'s codes in K block kb (count 2: 32
// codes of vec 16, the second scale the next byte, the first at an even
// address as code0 / 16 is even: one 16-bit load), zero-extended.
Reg AmaxKernel::scale_bytes(const Reg& sf_stage, const RowReads& row, const Reg& kb, int count) {
  Reg address = sf_stage + row.site;
  if (p_.vec == 32) address = address + ((kb & 1u) << 1);
  Reg narrow = k_.reg(u16), e = k_.reg(u32);
  k_.ld(Space::shared, count == 2 ? u16 : u8, narrow, at(address));
  k_.cvt(e, narrow);
  return e;
}

// Whether every scale byte in `bytes` (`count` each) folds: its value times
// 2^u (u = unbias_exponent()) a normal bf16 that one integer multiply-add
// builds (scale_factors). e8m0: E <= 254 - u (2^(E - 127 + u); E = 0 gives
// the subnormal 2^-127 times 2^u, normal). e4m3 (with E2M1 codes): S = 0, E
// in 1..8 (normal, below 4; subnormals, NaN and the rest go the slow way).
// Four bytes at a time in a word, SWAR: e8m0 fails where bit 7 is set and
// the low seven bits exceed 126 - u (adding 128 + u to them sets bit 7,
// without a carry out of the byte); e4m3 fits where byte + 0x38 lands in
// 0x40..0x7F (a carry out of a failing byte can only make its neighbour
// fail as well).
Pred AmaxKernel::scales_fold(const std::vector<Reg>& bytes, int count) {
  const bool e8m0 = p_.sf_dtype == DType::e8m0;
  std::optional<Pred> all;
  for (std::size_t i = 0; i < bytes.size(); i += 4 / count) {
    Reg word = bytes[i];
    if (count == 2 && i + 1 < bytes.size()) {
      word = k_.reg(u32);
      k_.prmt(word, bytes[i], bytes[i + 1], 0x5410u);  // bytes[i]'s two below bytes[i + 1]'s
    } else if (count == 1) {
      word = k_.reg(u32);
      k_.mov(word, bytes[i]);
      for (std::size_t j = 1; j < 4 && i + j < bytes.size(); ++j) word = word | (bytes[i + j] << imm(8 * j));
    }
    // Bytes not filled by scales: 0, which folds in e8m0; in e4m3 a 0x08 put in their place does.
    const int filled = count * static_cast<int>(std::min<std::size_t>(4 / count, bytes.size() - i));
    if (!e8m0 && filled < 4) word = word | imm(0x08080808u << (8 * filled));
    const std::uint32_t above = static_cast<std::uint32_t>(128 + unbias_exponent() - 127) * 0x01010101u;
    Pred fits = e8m0 ? ((word & (((word & 0x7F7F7F7Fu) + imm(above))) & 0x80808080u) == 0u)
                     : (((word + 0x38383838u) & 0xC0C0C0C0u) == 0x40404040u);
    all = all ? Pred(*all && fits) : fits;
  }
  return *all;
}

// The multipliers (bf16x2, the value in both halves) for the `count`
// scales in `bytes`: with `folded` (scales_fold held), scale x
// 2^unbias_exponent() built by one multiply-add on the byte put in both
// halves (e8m0: exponent field E + u; e4m3 S.EEEE.MMM: the fields moved
// 4 up plus 246 on the exponent, 2^(E - 7) x 1.MMM x 2^126); else the
// scales themselves (decode_scale). 0 past K: TMA zero-filled those codes,
// but the layout's padding scale might be NaN, and the sum would carry it
// into C. Only a K that is no multiple of the 64-code block reaches past
// it. (Rows past M or N need nothing: their accumulators are neither
// stored nor counted in amax.)
Regs AmaxKernel::scale_factors(const Reg& bytes, int count, const Reg& kb, const Reg& code0, bool folded) {
  const std::int64_t blocks = (p_.k + p_.vec - 1) / p_.vec;
  const bool e8m0 = p_.sf_dtype == DType::e8m0;
  Regs factors;
  for (int g = 0; g < count; ++g) {
    Reg f = k_.reg(u32);
    if (folded) {
      Reg both = k_.reg(u32);
      k_.prmt(both, bytes, k_.mov(u32, 0u), g ? 0x4141u : 0x4040u);  // byte g in both halves
      const std::uint32_t field = e8m0 ? static_cast<std::uint32_t>(unbias_exponent()) << 7 : 0x7B00u;  // + 246 << 7
      k_.mad(f, both, e8m0 ? 0x80u : 0x10u, imm(field | field << 16));
    } else {
      k_.mov(f, decode_scale(bytes, g, count));
    }
    if (p_.k % kSm90aGemmAmaxTileK != 0)
      k_.selp(f, f, 0u, (((kb << 6) + code0 + imm(16 * g)) >> imm(p_.vec == 16 ? 4 : 5)) < imm(blocks));
    factors.push_back(f);
  }
  return factors;
}

// The bf16x2 bits (the value in both halves) of byte `byte` of `e`, `bytes`
// scales (1 or 2). e8m0 E,
// 2^(E-127), is the bf16 exponent field, one multiply placing it in both
// halves; E = 0 is the subnormal 2^-127 and E = 255 NaN (OCP MX v1.0,
// 5.4.1), both mantissa bit 6 on top of that. ue4m3 S.EEEE.MMM moves into
// the bf16 fields (the value times 2^-120; its subnormals land on bf16's),
// the sign coming from the byte prmt fills with it (PTX ISA 9.7.9.7,
// selector bit 3); an exact multiply restores the value; S.1111.111 is NaN.
Reg AmaxKernel::decode_scale(const Reg& e, int byte, int bytes) {
  Reg bits = k_.reg(u32);
  if (p_.sf_dtype == DType::e8m0) {
    Reg x = byte ? Reg(e >> 8u) : bytes == 2 ? Reg(e & 0xFFu) : e;
    k_.mov(bits, x * 0x00800080u);
    k_.selp(bits, bits | 0x00400040u, bits, (x - 1u) >= 254u);  // E = 0 or 255
    return bits;
  }
  Reg with_signs = k_.reg(u32);
  // bytes: the scale, its sign, the scale, its sign
  k_.prmt(with_signs, e, e, byte ? 0x9191u : 0x8080u);
  Reg moved = (with_signs << 4) & 0x87F087F0u;
  k_.mul(bits.as(bf16x2), moved.as(bf16x2), k_.mov(b32, 0x7B807B80u).as(bf16x2));  // x 2^120, exact
  k_.selp(bits, 0x7FC07FC0u, bits, (with_signs & 0x7Fu) == 0x7Fu);
  return bits;
}

// d = y x 2^unbias_exponent() x scale, exact: two bf16x2 multiplies, or
// one when `folded` (factor2 is then the scale times 2^unbias_exponent(),
// itself exact: the caller folds only scales whose product stays finite).
void AmaxKernel::apply_scale(const Reg& d, const Reg& y, const Reg& factor2, bool folded) {
  if (folded) {
    k_.mul(d.as(bf16x2), y.as(bf16x2), factor2.as(bf16x2));
    return;
  }
  const std::uint32_t unbias = static_cast<std::uint32_t>(unbias_exponent() + 127) << 7;
  k_.mul(d.as(bf16x2), y.as(bf16x2), k_.mov(b32, unbias | unbias << 16).as(bf16x2));
  k_.mul(d.as(bf16x2), d.as(bf16x2), factor2.as(bf16x2));
}

// E2M1 codes (no NaN or inf) to bf16: S.EE.M of each nibble into the bf16
// sign (bit 15) and fields (bits 8..6) is the value times 2^(1 - 127), code
// 1 (0.5) landing on a bf16 subnormal; then x 2^126 and x the scale
// (apply_scale). Word j holds codes 8j .. 8j + 7 (code 8j + c in bits
// 4c .. 4c + 3); codes 8j + i and 8j + i + 4 become the low and high halves
// of out[4j + i] (K permuted alike in both operands leaves the sum as it
// is). The bit moves are few because the integer ALU bounds this loop: a
// mask keeps the pair (nibbles i and i + 4: 16 bits apart), one multiply
// by 2^a + 2^b moves each code's EEM to bits 6..8 and its S to bit 15 of
// its half at once (the copies do not overlap, so no carries), a mask keeps
// them: for i = 0, 1 from the word, for i = 2, 3 from it shifted by 8.
void AmaxKernel::dequant_fp4(const Regs& w, const Regs& factor2, const Regs& out, bool folded) {
  const int words = static_cast<int>(w.size());  // 4, or 2 (one scale)
  for (int j = 0; j < words; ++j) {
    Reg high = w[j] >> 8u;
    for (int i = 0; i < 4; ++i) {
      const Reg& from = i < 2 ? w[j] : high;
      // Nibble at bit 0 (16): EEM to 6 (x 2^6), S from 3 to 15 (x 2^12);
      // at bit 4 (20): x 2^2 and x 2^8.
      Reg y = ((from & (i % 2 ? 0x00F000F0u : 0x000F000Fu)) * (i % 2 ? 0x104u : 0x1040u)) & 0x81C081C0u;
      apply_scale(out[static_cast<std::size_t>(4 * j + i)], y, factor2[static_cast<std::size_t>(2 * j / words)], folded);
    }
  }
}

// FP8 codes to bf16, 4 words (16 codes) into 8 pairs: codes 2p and 2p + 1
// (bytes of word p / 2) are the low and high halves of out[p]. Folded (no
// NaN or inf among the codes: codes_finite): a prmt gives each code's byte
// a byte of its sign bits above it (PTX ISA 9.7.9.7, selector bit 3), a
// shift puts S.EEEE.MMM (e4m3) or S.EEEEE.MM (e5m2) in bf16's fields under
// the copied sign, a mask keeps them: the value times 2^-u, times factor2
// (the scale times 2^u). Else exactly through cvt (f16x2 holds every FP8
// value, NaN and inf included; f32 and bf16 too), then times the scale.
void AmaxKernel::dequant_fp8(const Regs& w, const Reg& factor2, const Regs& out, bool folded) {
  const bool e4m3_codes = p_.ab_dtype == DType::e4m3;
  for (std::size_t p = 0; p < out.size(); ++p) {
    const Reg& word = w[p / 2];
    const std::uint32_t lo = 2 * (p % 2), hi = lo + 1;
    if (folded) {
      Reg x = k_.reg(u32);
      k_.prmt(x, word, word, (8 | hi) << 12 | hi << 8 | (8 | lo) << 4 | lo);
      Reg y = e4m3_codes ? Reg((x << 4u) & 0x87F087F0u) : Reg((x << 5u) & 0x8FE08FE0u);
      k_.mul(out[p].as(bf16x2), y.as(bf16x2), factor2.as(bf16x2));
      continue;
    }
    Reg pair = k_.reg(b16), halves = k_.reg(b32), h0 = k_.reg(b16), h1 = k_.reg(b16);
    k_.cvt(u16, u32, pair, word >> imm(16 * (p % 2)));
    k_.cvt_unpack_fp8(e4m3_codes ? e4m3x2 : e5m2x2, halves, pair);
    k_.cvt(u16, u32, h0, halves);
    k_.cvt(u16, u32, h1, halves >> 16u);
    Reg f0 = k_.reg(f32), f1 = k_.reg(f32), v = k_.reg(b32);
    k_.cvt(f32, f16, f0, h0);
    k_.cvt(f32, f16, f1, h1);
    k_.cvt_pack(bf16x2, v, f1, f0);
    k_.mul(out[p].as(bf16x2), v.as(bf16x2), factor2.as(bf16x2));
  }
}

// Whether no FP8 code in `words` is NaN or inf: SWAR per word, adding 1
// (e4m3: NaN is S.1111.111) or 4 (e5m2: NaN and inf are S.11111.xx) to
// every byte flips its bit 7 exactly where those bits are all ones (a
// carry into the next byte comes only out of such a byte); the flips of
// all words or-ed (one lop3 each with the xor), one test.
Pred AmaxKernel::codes_finite(const std::vector<Regs>& words) {
  const std::uint32_t one = p_.ab_dtype == DType::e4m3 ? 0x01010101u : 0x04040404u;
  Reg flips = k_.mov(u32, 0u);
  for (const Regs& ws : words)
    for (const Reg& w : ws) k_.mov(flips, ((w + imm(one)) ^ w) | flips);
  return (flips & 0x80808080u) == 0u;
}

// The raw row (64 codes: 32 bytes of E2M1, 64 of FP8) is C = 2 or 4 16-byte
// chunks; converting thread t of T (the dequantizer warpgroups', or the
// converting scheme's three) takes chunk t % C of rows t / C + (T / C) i: a
// warp reads 512 contiguous bytes, and its bf16 writes cover all 32 banks
// once the swizzle is applied.
AmaxKernel::ChunkMap AmaxKernel::chunk_map() {
  ChunkMap m;
  m.chunks = static_cast<int>(raw_row_bytes() / 16);
  m.codes = kSm90aGemmAmaxTileK / m.chunks;
  const int threads = 128 * (converting() ? kConsumers + 1 : t_.dequant_warpgroups);
  m.row_step = threads / m.chunks;
  // FP4 with 16-code blocks has two scales per chunk (words 0-1 and 2-3).
  m.scales = m.codes / std::min(m.codes, p_.vec);
  Reg t = converting() ? tid_ : tid_ - imm(128 * kDequantWg0);
  m.c = t & imm(m.chunks - 1);
  m.row_in = t >> imm(m.chunks == 4 ? 2 : 1);
  m.swz = m.row_in & 7u;  // row % 8, the same for rows + row_step i
  return m;
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

// E2M1 codes in `w` (4 words, or 2) to bf16 pairs in `out`, times the
// first of the `count` scales in `bytes` (the first half of w's codes) and
// the last (the second): one multiply per pair where the scales fold, two
// where not (scales_fold).
void AmaxKernel::dequant_words(const Regs& w, const Reg& bytes, int count, const Reg& kb, const Reg& code0,
                               const Regs& out) {
  auto convert = [&](bool folded) {
    const Regs f = scale_factors(bytes, count, kb, code0, folded);
    dequant_fp4(w, Regs{f.front(), f.back()}, out, folded);
  };
  k_.if_else(scales_fold({bytes}, count), [&] { convert(true); }, [&] { convert(false); });
}

void AmaxKernel::consumer() {
  Reg cw = tid_ >> 7;
  Pred leader = (tid_ & 127) == 0;
  Regs acc = k_.regs(f32, t_.tile_n / 2, "acc");
  // K-major tiles of 128-byte rows (bf16, or the FP8 codes with fp8_mma):
  // 8-row atoms (SBO = one atom; LBO unused with the 128-byte swizzle,
  // encoded as 16).
  // (The converting warpgroups' bf16 stages hold A's 128 rows, then B's.)
  Reg b_tiles = base_ + (t_.fp8_mma ? smem_.raw_b : smem_.b + (converting() ? kTileM * kRow : 0));
  Reg desc_b0 = tile::warpgroup::smem_descriptor(k_, b_tiles, 16, kAtom);
  Reg stage = k_.mov(u32, 0), phase = k_.mov(u32, 0);
  Reg thread_max = k_.mov(u32, 0u);
  // (The converting scheme's three warpgroups keep the entry's even split.)
  if (!converting()) k_.setmaxnreg_inc(consumer_registers(t_));
  if (t_.fp8_mma) {
    Reg desc_a0 = tile::warpgroup::smem_descriptor(k_, base_ + smem_.raw_a + cw * (64 * kRow), 16, kAtom);
    const Regs part[2] = {k_.regs(f32, t_.tile_n / 4, "part"), k_.regs(f32, t_.tile_n / 4, "part_next")};
    for_each_tile([&](const TileCoords& t) {
      mainloop_fp8(acc, part, desc_a0, desc_b0, stage, phase, leader, cw, t);
      finish_tile(acc, t, cw, thread_max);
    });
  } else if (converting()) {
    Reg desc_a0 = tile::warpgroup::smem_descriptor(k_, base_ + smem_.b + cw * (64 * kRow), 16, kAtom);
    const ChunkMap m = chunk_map();
    const ConvertRows rows = convert_rows(m);
    Reg rstage = k_.mov(u32, 0), rphase = k_.mov(u32, 0);
    for_each_tile([&](const TileCoords& t) {
      mainloop_converting(&acc, desc_a0, desc_b0, stage, rstage, rphase, m, rows, nullptr, t);
      finish_tile(acc, t, cw, thread_max);
    });
  } else {
    // The thread's rows r = 16·warp + lane/4 and r + 8 of the warpgroup's
    // 64, codes 16·(lane % 4) .. + 15 of each K block (8 bytes, one scale:
    // dequant_a_fragments).
    Reg lane = tid_ & 31u;
    Reg row0 = cw * 64 + ((tid_ >> 5) & 3u) * 16 + (lane >> 2);  // in the tile
    ARows a{.code0 = (lane & 3u) << 4};
    for (int h = 0; h < 2; ++h) {
      Reg row = row0 + imm(8 * h);
      a.rows[h] = {row * raw_row_bytes() + ((lane & 3u) << 3), scale_site(row, a.code0)};
    }
    Reg rstage = k_.mov(u32, 0), rphase = k_.mov(u32, 0);
    for_each_tile([&](const TileCoords& t) {
      mainloop_dequantized(acc, desc_b0, stage, phase, rstage, rphase, leader, a, t);
      finish_tile(acc, t, cw, thread_max);
    });
  }
  // |C| bits: unsigned order is value order, a positive NaN above +inf.
  Reg warp_max = k_.reg(u32);
  k_.redux_sync(Redux::max, warp_max, thread_max);
  Reg cta_amax = base_ + smem_.amax;
  k_.if_then((tid_ & 31u) == 0u, [&] { k_.red(Space::shared, AtomOp::max, u32, at(cta_amax), warp_max); });
  k_.bar_sync(1, 128 * kConsumers);
  k_.if_then(tid_ == 0u, [&] {
    Reg cta_max = k_.reg(u32);
    k_.ld(Space::shared, u32, cta_max, at(cta_amax));
    k_.red(Space::global, AtomOp::max, u32, at(amax_), cta_max);
  });
}

// Converting warpgroups: thread t of the 384 (two consumer warpgroups and
// the helper) takes chunk c = t % C (E2M1: C = 2 chunks of 32 codes; FP8: 4
// of 16) of stage rows r = t / C + (384 / C) i of the 384 (A's 128, then
// B's 256). In a raw stage (A's rows then B's) and a scale stage (SFA's
// piece, then SFB's two) the stage row is all that counts: its piece is
// row / 128, its byte in the piece scale_site(row % 128). In a bf16 stage,
// row r's 64 codes are in K order, chunk c's n = codes / 8 16-byte chunks of
// bf16 at chunks (nc + q) ^ (r % 8), the 128-byte swizzle; the rows share
// r % 8.
AmaxKernel::ConvertRows AmaxKernel::convert_rows(const ChunkMap& m) {
  Reg code0 = m.c * imm(m.codes);
  ConvertRows rows{m.row_in * raw_row_bytes() + (m.c << 4), {},
                   (m.row_in * kRow) | (((m.c * imm(m.codes / 8)) ^ m.swz) << 4)};
  for (int f = 0; f < kTileM + t_.tile_n; f += m.row_step) {
    Reg row = m.row_in + imm(f);
    rows.sites.push_back(((row >> 7) * kScalePiece) + scale_site(row, code0));
  }
  return rows;
}

// Raw stage `rstage` (K block kb) to bf16 stage `cstage`. Every row's loads
// first, then one branch on whether all its scales fold (scales_fold): the
// conversions form one block with the loads' latency behind them.
void AmaxKernel::convert_stage(const ChunkMap& m, const ConvertRows& rows, const Reg& rstage, const Reg& rphase,
                               const Reg& kb, const Reg& cstage) {
  k_.mbarrier_wait_parity(at(barrier(smem_.raw_full, rstage)), rphase);
  Reg code0 = m.c * imm(m.codes);
  Reg raw = base_ + smem_.raw_a + rstage * smem_.raw_stage + rows.raw;
  Reg sf = base_ + smem_.raw_sfa + rstage * smem_.sf_stage;
  Reg dst = base_ + smem_.b + cstage * smem_.b_stage + rows.store;
  // Rows in groups of two (the registers of four FP8 rows' codes do not
  // fit beside the accumulators).
  const std::size_t rows_per_group = 2;
  for (std::size_t first = 0; first < rows.sites.size(); first += rows_per_group) {
    std::vector<Regs> words;
    std::vector<Reg> scales;
    for (std::size_t i = first; i < first + rows_per_group && i < rows.sites.size(); ++i) {
      const std::int64_t f = static_cast<std::int64_t>(i) * m.row_step;
      scales.push_back(scale_bytes(sf, RowReads{rows.raw, rows.sites[i]}, kb, m.scales));
      words.push_back(Regs{k_.reg(b32), k_.reg(b32), k_.reg(b32), k_.reg(b32)});
      k_.ld(Space::shared, b32, words.back(), at(raw, f * raw_row_bytes()));
    }
    auto convert = [&](bool folded) {
      for (std::size_t i = 0; i < words.size(); ++i) {
        const Regs factors = scale_factors(scales[i], m.scales, kb, code0, folded);
        Regs out;
        for (int o = 0; o < m.codes / 2; ++o) out.push_back(k_.reg(b32));
        if (fp4())
          dequant_fp4(words[i], Regs{factors.front(), factors.back()}, out, folded);
        else
          dequant_fp8(words[i], factors.front(), out, folded);
        const std::int64_t f = static_cast<std::int64_t>(first + i) * m.row_step;
        for (int q = 0; q < m.codes / 8; ++q)
          k_.st(Space::shared, b32, at(dst ^ imm(q << 4), f * kRow), Regs(out.begin() + 4 * q, out.begin() + 4 * q + 4));
      }
    };
    // FP8 codes that are NaN or inf take the exact (slow) way too.
    Pred fast = fp4() ? scales_fold(scales, m.scales) : Pred(scales_fold(scales, m.scales) && codes_finite(words));
    k_.if_else(fast, [&] { convert(true); }, [&] { convert(false); });
  }
  advance(rstage, rphase, t_.raw_stages);
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
void AmaxKernel::mainloop_converting(const Regs* acc, const Reg& desc_a0, const Reg& desc_b0, const Reg& stage,
                                     const Reg& rstage, const Reg& rphase, const ChunkMap& m,
                                     const ConvertRows& rows, LoadCursor* loads, const TileCoords& t) {
  const std::uint32_t all = 4;  // the named barrier of the three converting warpgroups (0-3 are taken)
  auto next = [&](const Reg& s) {
    Reg n = s + 1u;
    k_.selp(n, 0u, n, n == imm(t_.stages));
    return n;
  };
  auto publish = [&](const std::optional<Pred>& converted) {
    k_.fence_proxy_async_shared();
    // Not bar.sync (aligned): the fold branches, the raw-stage waits and
    // the issuing thread's loads may leave a warp's threads apart here
    // (compute-sanitizer's synccheck flagged bar.sync, even behind a
    // bar.warp.sync).
    k_.barrier_sync(all, 128 * (kConsumers + 1));
    if (!loads) return;
    Pred issuer = tid_ == imm(128 * kProducerWg);
    k_.if_then(converted ? Pred(issuer && *converted) : issuer, [&] { issue_load(*loads); });
  };
  convert_stage(m, rows, rstage, rphase, t.kb0, stage);
  publish(std::nullopt);
  k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
    if (acc) {
      Reg da = stage_descriptor(desc_a0, stage, smem_.b_stage), db = stage_descriptor(desc_b0, stage, smem_.b_stage);
      Pred accumulate = kb != t.kb0;
      k_.wgmma_fence();
      for (int s = 0; s < kSm90aGemmAmaxTileK / 16; ++s)  // each k16 step moves 32 bytes along the rows
        k_.wgmma_mma_async(bf16, bf16, *acc, da + static_cast<std::uint64_t>(2 * s),
                           db + static_cast<std::uint64_t>(2 * s),
                           s == 0 ? std::variant<bool, PredUse>(accumulate) : true, WgmmaMajor::k, WgmmaMajor::k);
      k_.wgmma_commit_group();
    }
    k_.mov(stage, next(stage));
    Pred more = kb + 1u < t.kb1;
    k_.if_then(more, [&] { convert_stage(m, rows, rstage, rphase, kb + 1u, stage); });
    if (acc) k_.wgmma_wait_group(1);
    publish(more);
  });
  if (acc) k_.wgmma_wait_group(0);
}

// The helper warpgroup of the converting scheme: converts its share of
// every stage and, in its first thread, keeps the raw stages loaded: all
// of them at the start, then one per conversion (mainloop_converting).
void AmaxKernel::converting_helper() {
  const ChunkMap m = chunk_map();
  const ConvertRows rows = convert_rows(m);
  LoadCursor loads = load_cursor();
  k_.if_then(tid_ == imm(128 * kProducerWg), [&] {
    for (int i = 0; i < t_.raw_stages; ++i) issue_load(loads);
  });
  Reg stage = k_.mov(u32, 0), rstage = k_.mov(u32, 0), rphase = k_.mov(u32, 0);
  Reg none = k_.mov(u64, 0u);
  for_each_tile([&](const TileCoords& t) {
    mainloop_converting(nullptr, none, none, stage, rstage, rphase, m, rows, &loads, t);
  });
}

// The wgmma descriptor of stage `stage`'s tile, stages `stage_bytes`
// apart: the start address field counts 16-byte units.
Reg AmaxKernel::stage_descriptor(const Reg& desc0, const Reg& stage, std::uint32_t stage_bytes) {
  Reg d = k_.reg(u64);
  k_.cvt(d, stage * (stage_bytes >> 4));
  k_.add(d, d, desc0);
  return d;
}

// This thread's A fragments for the four k16 steps of raw stage `rstage`
// (K block kb), dequantized into `out` (16 registers): rows a.rows (one
// 8-byte load and one scale each). Pair j of row h's 8 (dequant_fp4) is
// out[8h + j]. Step s's fragment (PTX ISA 9.7.15.5.1.1: row r, columns
// 2(lane%4) + {0,1}; row r + 8; then both at + 8) takes pairs 2s and
// 2s + 1 of each row: a row's pair 2s + e sits at wgmma positions 16s + 2t
// + 8e + {0,1} (t = lane % 4), the order the dequantizer stores B's pairs
// in (dequant_b). Frees the raw stage.
void AmaxKernel::dequant_a_fragments(const ARows& a, const Reg& rstage, const Reg& rphase, const Reg& kb,
                                     const Regs& out) {
  k_.mbarrier_wait_parity(at(barrier(smem_.raw_full, rstage)), rphase);
  Reg raw = base_ + smem_.raw_a + rstage * smem_.raw_stage;
  Reg sf_stage = base_ + smem_.raw_sfa + rstage * smem_.sf_stage;
  for (int h = 0; h < 2; ++h) {
    Regs w;
    for (int j = 0; j < 2; ++j) w.push_back(k_.reg(b32));
    k_.ld(Space::shared, b32, w, at(raw + a.rows[h].raw));
    dequant_words(w, scale_bytes(sf_stage, a.rows[h], kb, 1), 1, kb, a.code0, Regs(out.begin() + 8 * h, out.begin() + 8 * h + 8));
  }
  k_.mbarrier_arrive(at(barrier(smem_.raw_empty, rstage)));
}

// The dequantizer's formats: per K block, the four k16 steps' wgmma m64n<tile_n>k16 take A
// from registers and B from the dequantizer's bf16 stage; the next block's
// A is dequantized while they run (two fragment sets).
void AmaxKernel::mainloop_dequantized(const Regs& acc, const Reg& desc_b0, const Reg& stage, const Reg& phase,
                                     const Reg& rstage, const Reg& rphase, const Pred& leader, const ARows& a,
                                     const TileCoords& t) {
  const Regs frags[2] = {k_.regs(b32, 16, "afrag"), k_.regs(b32, 16, "afrag_next")};
  dequant_a_fragments(a, rstage, rphase, t.kb0, frags[0]);
  advance(rstage, rphase, t_.raw_stages);
  // K block kb's wgmma on fragments `now` while the next block's A goes
  // into `next`; the loop takes two blocks per trip so that the two sets
  // trade roles without register moves.
  auto block = [&](const Reg& kb, const Regs& now, const Regs& next) {
    k_.mbarrier_wait_parity(at(barrier(smem_.full, stage)), phase);
    Reg db = stage_descriptor(desc_b0, stage, smem_.b_stage);
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
      dequant_a_fragments(a, rstage, rphase, kb + 1u, next);
      advance(rstage, rphase, t_.raw_stages);
    });
    k_.wgmma_wait_group(0);
    k_.if_then(leader, [&] { k_.mbarrier_arrive(at(barrier(smem_.empty, stage))); });
    advance(stage, phase, t_.stages);
  };
  k_.for_nonempty_range(t.kb0, t.kb1, 2, [&](Reg kb) {
    block(kb, frags[0], frags[1]);
    k_.if_then(kb + 1u < t.kb1, [&] { block(kb + 1u, frags[1], frags[0]); });
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
                              const Reg& stage, const Reg& phase, const Pred& leader, const Reg& cw,
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
    k_.mbarrier_wait_parity(at(barrier(smem_.raw_full, stage)), phase);
    k_.mbarrier_wait_parity(at(barrier(smem_.ready, stage)), phase);
    k_.mov(da, stage_descriptor(desc_a0, stage, smem_.raw_stage));
    k_.mov(db, stage_descriptor(desc_b0, stage, smem_.raw_stage));
    k_.mov(scales, base_ + smem_.scales + stage * smem_.scales_stage);
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
      k_.if_then(leader, [&] { k_.mbarrier_arrive(at(barrier(smem_.raw_empty, stage))); });
      advance(stage, phase, t_.raw_stages);
      k_.if_then(kb + 1u < t.kb1, [&] {
        enter_stage();
        issue(0);
      });
      accumulate(step);
    }
  });
}

// The tile's last step. Without split-K: the epilogue. With it, every
// split but the first publishes its sums (each consumer warpgroup its 64
// rows: a workspace slot, then a flag raised behind a gpu-scope fence, the
// memory model's release pattern, PTX ISA 8.9.3); the first split waits for
// each flag in split order (one thread spins, clears it for the next launch
// and fences: the acquire; the warpgroup's named barrier passes it on), adds
// the sums in that fixed order, so every run gives the same C, and runs the
// epilogue. A tile's splits are neighbouring units, all of them resident at
// once (the grid holds at most one CTA per SM and no more units than CTAs).
void AmaxKernel::finish_tile(const Regs& acc, const TileCoords& t, const Reg& cw, const Reg& thread_max) {
  if (t_.splits == 1) return epilogue(acc, t, cw, thread_max);
  const std::uint32_t barrier_id = 2;  // + cw; 0 and 1 are the CTA's and the consumers'
  const Pred leader = (tid_ & 127u) == 0u;
  Reg thread_offset = k_.reg(u64);
  k_.mul_wide(thread_offset, tid_ & 127u, 16);  // registers 4j.. at (128j + thread)·16: coalesced
  k_.if_else(
      t.split != 0u,
      [&] {
        Reg slot = partial_slot(t, t.split, cw) + thread_offset;
        for (std::size_t i = 0; i < acc.size(); i += 4)
          k_.st(Space::global, f32, at(slot, static_cast<std::int64_t>(i / 4 * 128 * 16)),
                Regs{acc[i], acc[i + 1], acc[i + 2], acc[i + 3]});
        k_.bar_sync(cw + barrier_id, 128);
        k_.if_then(leader, [&] {
          k_.fence(FenceSem::acq_rel, Scope::gpu);
          k_.st(Space::global, u32, at(partial_flag(t, t.split, cw)), 1u, {.volatile_ = true});
        });
      },
      [&] {
        // Split s's slot and flag are split 1's plus (s - 1) x kConsumers (partial_index).
        Regs sum = k_.regs(f32, 4, "partial");
        Reg one = k_.mov(u32, 1u);
        Reg first_slot = partial_slot(t, one, cw) + thread_offset, first_flag = partial_flag(t, one, cw);
        for (int split = 1; split < t_.splits; ++split) {
          const std::int64_t apart = (split - 1) * kConsumers;
          k_.if_then(leader, [&] {
            Reg raised = k_.reg(u32);
            k_.while_loop(
                [&] {
                  k_.ld(Space::global, u32, raised, at(first_flag, 4 * apart), {.volatile_ = true});
                  return raised == 0u;
                },
                [] {});
            k_.fence(FenceSem::acq_rel, Scope::gpu);
            k_.st(Space::global, u32, at(first_flag, 4 * apart), 0u, {.volatile_ = true});
          });
          k_.bar_sync(cw + barrier_id, 128);
          for (std::size_t i = 0; i < acc.size(); i += 4) {
            // After the acquire, plain loads (at L2, .cg) that ptxas may keep in flight together.
            k_.ld(Space::global, f32, sum,
                  at(first_slot, apart * sm90a_gemm_amax_partial_bytes(t_) + static_cast<std::int64_t>(i / 4 * 128 * 16)),
                  {.cache = Cache::cg});
            for (std::size_t j = 0; j < 4; ++j) k_.add(acc[i + j], acc[i + j], sum[j]);
          }
        }
        epilogue(acc, t, cw, thread_max);
      });
}

// The split-K workspace (sm90a_gemm_amax_workspace_bytes): a slot of f32
// sums per (tile, split after the first, consumer warpgroup), then a u32
// flag for each slot.
Reg AmaxKernel::partial_index(const TileCoords& t, const Reg& split, const Reg& cw) {
  return (t.tile * imm(t_.splits - 1) + split - 1u) * imm(kConsumers) + cw;
}

Reg AmaxKernel::partial_slot(const TileCoords& t, const Reg& split, const Reg& cw) {
  Reg offset = k_.reg(u64);
  k_.mul_wide(offset, partial_index(t, split, cw), imm(sm90a_gemm_amax_partial_bytes(t_)));
  return workspace_ + offset;
}

Reg AmaxKernel::partial_flag(const TileCoords& t, const Reg& split, const Reg& cw) {
  const std::int64_t slots = per_batch_ * p_.l * (t_.splits - 1) * kConsumers;
  Reg offset = k_.reg(u64);
  k_.mul_wide(offset, partial_index(t, split, cw), 4u);
  return workspace_ + offset + static_cast<std::uint64_t>(slots * sm90a_gemm_amax_partial_bytes(t_));
}

// Accumulator pair i of an m64nN wgmma (PTX ISA 9.7.15.5.1.1, the D
// fragment): row 16·warp + lane/4 + 8·((i/2) % 2) of the warpgroup's 64,
// columns 8·(i/4) + 2·(lane%4) + {0, 1}. The thread's two rows' addresses
// at its first column are computed once; the pairs are constants from them
// (registers are scarce beside 128 accumulators).
void AmaxKernel::epilogue(const Regs& acc, const TileCoords& t, const Reg& cw, const Reg& thread_max) {
  const std::int64_t es = runtime::bits(p_.c_dtype) / 8;
  Reg lane = tid_ & 31u;
  Reg row_base = t.m0 + cw * 64 + ((tid_ >> 5) & 3u) * 16 + (lane >> 2);
  Reg col_base = t.n0 + ((lane & 3u) << 1);
  Reg first = k_.reg(u64), part = k_.reg(u64);
  k_.mul_wide(first, col_base, imm(p_.c.col * es));
  k_.mul_wide(part, t.batch, imm(p_.c.batch * es));
  k_.add(first, first, part);
  Reg address[2];
  std::optional<Pred> row_in[2];
  for (int h = 0; h < 2; ++h) {
    Reg row = row_base + imm(8 * h);
    row_in[h] = row < imm(p_.m);
    k_.mul_wide(part, row, imm(p_.c.row * es));
    address[h] = c_ + first + part;
  }
  for (int i = 0; i < t_.tile_n / 2; i += 2) {
    const int h = (i / 2) % 2;
    const std::int64_t col = 8 * (i / 4);  // past col_base
    if (col >= p_.n) continue;  // past N in every tile
    Pred in0 = *row_in[h] && (col_base < imm(p_.n - col));
    Pred in1 = *row_in[h] && (col_base < imm(p_.n - 1 - col));
    const Reg& v0 = acc[static_cast<std::size_t>(i)];
    const Reg& v1 = acc[static_cast<std::size_t>(i + 1)];
    // Past M or N the accumulator is A's NaN times B's zero fill, or the
    // like: only elements of C count toward amax.
    for (int e = 0; e < 2; ++e) {
      Reg bits = k_.reg(b32);
      k_.mov(bits, e ? v1 : v0);
      Reg magnitude = bits.as(u32) & 0x7fffffffu;
      Reg kept = k_.reg(u32);
      k_.selp(kept, magnitude, 0u, e ? in1 : in0);
      k_.max(thread_max, thread_max, kept);
    }
    // st's immediate offset is 32-bit signed (PTX ISA 6.4.1, addresses as operands).
    const std::int64_t offset = col * p_.c.col * es;
    if (offset + p_.c.col * es <= std::numeric_limits<std::int32_t>::max()) {
      store_pair(v0, v1, address[h], offset, in0, in1);
    } else {
      Reg far = k_.reg(u64);
      k_.add(far, address[h], static_cast<std::uint64_t>(offset));
      store_pair(v0, v1, far, 0, in0, in1);
    }
  }
}

// C[row, col] = v0 and C[row, col + 1] = v1 where in range, C[row, col] at
// `address` + `offset`. n-major C holds them side by side at an even
// column, so one 8- or 4-byte store takes both (aligned: C's base and row
// stride are multiples of 16 bytes); m-major C takes two stores.
void AmaxKernel::store_pair(const Reg& v0, const Reg& v1, const Reg& address, std::int64_t offset, const Pred& in0,
                            const Pred& in1) {
  const int es = runtime::bits(p_.c_dtype) / 8;
  const bool wide = p_.c_dtype == DType::f32;
  const Type half = p_.c_dtype == DType::f16 ? f16 : bf16;
  auto store_one = [&](const Reg& v, const Addr& where) {
    if (wide) {
      k_.st(Space::global, f32, where, v);
      return;
    }
    Reg h = k_.reg(b16);
    k_.cvt(half, f32, h, v, {Round::rn});
    k_.st(Space::global, b16, where, h);
  };
  if (p_.c.col != 1) {
    k_.guarded(in0, [&] { store_one(v0, at(address, offset)); });
    k_.guarded(in1, [&] { store_one(v1, at(address, offset + static_cast<std::int64_t>(p_.c.col * es))); });
    return;
  }
  if (wide) {
    k_.if_else(
        in1, [&] { k_.st(Space::global, f32, at(address, offset), Regs{v0, v1}); },
        [&] { k_.guarded(in0, [&] { k_.st(Space::global, f32, at(address, offset), v0); }); });
    return;
  }
  Reg packed = k_.reg(b32);  // v0 in the low half, the lower address
  k_.cvt_pack(half == f16 ? f16x2 : bf16x2, packed, v1, v0);
  Reg low = k_.reg(b16);
  k_.cvt(u16, u32, low, packed);
  k_.guarded(in1, [&] { k_.st(Space::global, b32, at(address, offset), packed); });
  k_.guarded(in0 && !in1, [&] { k_.st(Space::global, b16, at(address, offset), low); });
}

}  // namespace

Sm90aGemmAmaxSmem sm90a_gemm_amax_smem(runtime::DType ab, const Sm90aGemmAmaxTiling& t) {
  Sm90aGemmAmaxSmem m{};
  const std::uint32_t raw_row = sm90a_gemm_amax_raw_row_bytes(ab, t);
  // Converting warpgroups keep A's 128 rows in the bf16 stage too, before B's.
  const bool converting = !t.fp8_mma && t.dequant_warpgroups == 0;
  m.b_stage = t.fp8_mma ? 0 : static_cast<std::uint32_t>(t.tile_n + (converting ? kTileM : 0)) * kRow;
  // A raw stage is A's rows then B's (1024-aligned with fp8_mma: 128-byte
  // rows, tiles of 64 or 128 rows), a scale stage SFA's piece then SFB's.
  m.raw_stage = static_cast<std::uint32_t>(kTileM + t.tile_n) * raw_row;
  m.sf_stage = static_cast<std::uint32_t>(1 + sm90a_gemm_amax_sfb_pieces(t)) * kScalePiece;
  m.scales_stage = t.fp8_mma ? 4 * 4 * static_cast<std::uint32_t>(kTileM + scale_block_floats(false, t.tile_n)) : 0;
  const auto stages = t.fp8_mma ? 0u : static_cast<std::uint32_t>(t.stages), raw = static_cast<std::uint32_t>(t.raw_stages);
  m.b = 0;
  m.raw_a = m.b + stages * m.b_stage;
  m.raw_b = m.raw_a + kTileM * raw_row;
  m.raw_sfa = m.raw_a + raw * m.raw_stage;
  m.raw_sfb = m.raw_sfa + kScalePiece;
  m.scales = m.raw_sfa + raw * m.sf_stage;
  m.raw_full = m.scales + raw * m.scales_stage;
  m.raw_empty = m.raw_full + 8 * raw;
  m.ready = m.raw_empty + 8 * raw;
  m.full = m.ready + (t.fp8_mma ? 8 * raw : 0);
  m.empty = m.full + 8 * stages;
  m.amax = m.empty + 8 * stages;
  m.bytes = m.amax + 8 + 1024;
  return m;
}

std::size_t sm90a_gemm_amax_workspace_bytes(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) {
  const std::int64_t tiles = (p.m + kTileM - 1) / kTileM * ((p.n + t.tile_n - 1) / t.tile_n) * p.l;
  return static_cast<std::size_t>(tiles * (t.splits - 1) * kConsumers) * (sm90a_gemm_amax_partial_bytes(t) + 4);
}

std::string sm90a_gemm_amax_name(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) {
  return "gemm_amax_sm90a_" + std::string(runtime::name(p.ab_dtype)) + "_" + std::string(runtime::name(p.c_dtype)) +
         "_128x" + std::to_string(t.tile_n) + "_s" + std::to_string(t.stages) + "r" + std::to_string(t.raw_stages) +
         (t.fp8_mma ? "_fp8mma" : "_dq" + std::to_string(t.dequant_warpgroups)) +
         (t.splits > 1 ? "_k" + std::to_string(t.splits) : "");
}

ptx::Module build_sm90a_gemm_amax(const GemmAmaxProblem& problem, const Sm90aGemmAmaxTiling& tiling) {
  return AmaxKernel(problem, tiling).build();
}

}  // namespace warpforge::ops
