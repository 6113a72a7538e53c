#include "skinny_gemm_amax_kernel.hpp"

#include <bit>
#include <optional>
#include <vector>

#include "block_codes.hpp"
#include "transposed_output.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/tile/tile_scheduler.hpp"

namespace warpforge::ops {
namespace {

using namespace dsl;
using runtime::DType;

constexpr int kLanesPerRow = 4;           // an mma row group's lanes (PTX ISA 9.7.14.5.8: threadID_in_group)

// One row's 16-byte piece of a chunk, as a lane loads it: its codes and the
// scale bytes that go with them.
struct Piece {
  Regs words;  // 4 x b32
  Reg scales;  // 1 or 2 scale bytes, zero-extended
};

// Where a lane's pieces of one row come from, for every chunk: the row's
// codes (this lane's 16 bytes of chunk 0) and its scales' row part in the
// 128x4 layout (scale_factor_layout.hpp).
struct RowSource {
  Reg codes;      // u64 global address
  Reg scale_row;  // u32 byte offset in the scale tensor, before the K block's part
};

class SkinnyKernel {
 public:
  SkinnyKernel(const GemmAmaxProblem& p, const SkinnyGemmAmaxTiling& t)
      : p_(p),
        t_(t),
        k_(kSkinnyGemmAmaxKernel, Target::sm_90a),
        codes_(k_, p),
        tokens_(skinny_gemm_amax_tokens(p)),
        chunk_(skinny_gemm_amax_chunk_codes(p)),
        steps_(static_cast<int>(chunk_ / 16)),  // mma k16 steps a chunk
        chunks_(p.k / chunk_) {
    if (t.warps < 1 || t.warps > 8 || t.row_tiles < 1 || t.row_tiles > 2 || t.prefetch < 1 || t.prefetch > 3)
      throw OpsError("skinny gemm_amax kernel: tiling " + std::to_string(t.warps) + " warps x " +
                     std::to_string(t.row_tiles) + " row tiles, prefetch " + std::to_string(t.prefetch) +
                     "; it takes 1-8 warps, 1-2 row tiles, prefetch 1-3");
    if (p.m < 1 || p.m > kSkinnyGemmAmaxMaxM || p.k % chunk_ != 0)
      throw OpsError("skinny gemm_amax kernel: problem " + p.describe() + "; it takes M <= " +
                     std::to_string(kSkinnyGemmAmaxMaxM) + " and K a multiple of " + std::to_string(chunk_));
    per_split_ = (chunks_ + t.splits - 1) / t.splits;
    if (t.splits < 1 || (t.splits - 1) * per_split_ >= chunks_)
      throw OpsError("skinny gemm_amax kernel: " + std::to_string(t.splits) + " K splits of " +
                     std::to_string(chunks_) + " chunks; every split needs at least one");
  }

  ptx::Module build() {
    Reg pa = k_.param_ptr("A", 16), pb = k_.param_ptr("B", 16);
    psfa_ = k_.param_ptr("SFA");
    psfb_ = k_.param_ptr("SFB");
    Reg pc = k_.param_ptr("C"), pamax = k_.param_ptr("amax", 4);
    if (t_.splits > 1) workspace_ = k_.param_ptr("workspace", 16);
    k_.reqntid(imm(threads()));
    Shared stages = k_.shared("a_stages", 2 * stage_bytes(), 16);
    Shared last = k_.shared("last_split", 4, 4);

    tid_ = k_.sreg(SReg::tid_x);
    lane_ = tid_ & 31u;
    Reg warp = tid_ >> 5;
    batch_ = k_.sreg(SReg::ctaid_z);
    tile_ = k_.sreg(SReg::ctaid_x);
    Reg split = k_.sreg(SReg::ctaid_y);
    const auto [c0, c1] = tile::split_range(k_, split, imm(per_split_), imm(chunks_));  // this CTA's chunks
    Reg stage0 = k_.address_of(stages);
    // This lane's B rows: row group lane / 4 of each 16-row tile, and 8 below.
    row0_ = tile_ * imm(skinny_gemm_amax_cta_rows(t_)) + warp * imm(16 * t_.row_tiles) + (lane_ >> 2);
    piece_ = lane_ & 3u;  // the lane's 16 bytes of each chunk
    const ScaleFactorLayout sfa{p_.m, p_.k, p_.l, p_.vec}, sfb{p_.n, p_.k, p_.l, p_.vec};
    std::vector<RowSource> b_rows;
    for (int i = 0; i < t_.row_tiles; ++i)
      for (int h = 0; h < 2; ++h) b_rows.push_back(source(pb, sfb, p_.b, p_.n, row0_ + imm(16 * i + 8 * h), piece_));

    // A's pieces this thread converts: piece q of the chunk is token q / 4's lane q % 4.
    std::vector<ARows> a_rows;
    const int a_pieces = tokens_ * kLanesPerRow;
    for (int q0 = 0; q0 < a_pieces; q0 += threads()) {
      Reg q = tid_ + imm(q0);
      Reg token = q >> 2;
      std::optional<Pred> in;
      if (q0 + threads() > a_pieces) in = q < imm(a_pieces);
      a_rows.push_back({source(pa, sfa, p_.a, p_.m, token, q & 3u), token, q, in});
    }

    const int sets = t_.prefetch + 1;
    std::vector<std::vector<Piece>> ring(static_cast<std::size_t>(sets));
    for (auto& set : ring)
      for (std::size_t r = 0; r < b_rows.size(); ++r) set.push_back({k_.regs(b32, piece_words()), k_.reg(u32)});
    const int n_tiles = tokens_ / 8;
    std::vector<Regs> acc;
    for (int i = 0; i < t_.row_tiles * n_tiles; ++i) {
      acc.push_back(k_.regs(f32, 4));
      for (const Reg& r : acc.back()) k_.mov(r, imm_f32(0.0f));
    }

    // A's pieces ride a ring like B's, `prefetch` chunks ahead: A comes from
    // L2, and a chunk's mma are too few to hide its latency.
    std::vector<std::vector<Piece>> a_ring(static_cast<std::size_t>(sets));
    for (auto& set : a_ring)
      for (std::size_t i = 0; i < a_rows.size(); ++i) set.push_back({k_.regs(b32, piece_words()), k_.reg(u32)});
    auto ring_set = [&](std::vector<std::vector<Piece>>& r, int i) -> std::vector<Piece>& {
      return r[static_cast<std::size_t>(i % sets)];
    };

    // Prologue: B's and A's first chunks in flight, A's first chunk in stage 0.
    for (int s = 0; s < t_.prefetch; ++s) {
      load_b(b_rows, ring_set(ring, s), c0 + imm(s), c1);
      k_.if_then(c0 + imm(s) < c1, [&] { load_a(a_rows, ring_set(a_ring, s), c0 + imm(s)); });
    }
    convert_a(a_rows, ring_set(a_ring, 0), stage0);
    k_.bar_sync();

    // Chunk c + u uses ring set u (loaded prefetch chunks earlier) and A
    // stage (c + u - c0) % 2; the sets it frees take chunk c + u + prefetch,
    // and A's set u + 1 (the next chunk) is converted into the other stage
    // after the mma.
    k_.for_range(c0, c1, imm(sets), [&](Reg c) {
      for (int u = 0; u < sets; ++u) {
        Reg chunk = c + imm(u);
        k_.if_then(chunk < c1, [&] {
          Reg ahead = chunk + imm(t_.prefetch);
          load_b(b_rows, ring_set(ring, u + t_.prefetch), ahead, c1);
          Reg next = chunk + 1u;
          Pred more = next < c1;
          k_.if_then(ahead < c1, [&] { load_a(a_rows, ring_set(a_ring, u + t_.prefetch), ahead); });
          Reg parity = (chunk - c0) & 1u;
          multiply(ring_set(ring, u), stage0 + parity * imm(stage_bytes()), acc, n_tiles);
          k_.if_then(more, [&] { convert_a(a_rows, ring_set(a_ring, u + 1), stage0 + (parity ^ 1u) * imm(stage_bytes())); });
          k_.bar_sync();  // the next stage is written, this one read
        });
      }
    });

    const TransposedTiles tiles{acc, t_.row_tiles, n_tiles, row0_, (lane_ & 3u) << 1};
    auto epilogue = [&] { store_transposed(k_, p_, tiles, batch_, pc, pamax, lane_); };
    if (t_.splits == 1) {
      epilogue();
    } else {
      Reg unit = batch_ * imm((p_.n + skinny_gemm_amax_cta_rows(t_) - 1) / skinny_gemm_amax_cta_rows(t_)) + tile_;
      split_k_reduce(k_, acc,
                     {.threads = threads(), .thread = tid_, .unit = unit, .split = split, .splits = t_.splits,
                      .workspace = workspace_, .counter_offset = skinny_gemm_amax_counter_offset(p_, t_),
                      .flag = k_.address_of(last)},
                     epilogue);
    }
    return k_.module();
  }

 private:
  // A pieces a thread converts (per chunk): their source, token, and the
  // piece's index q; `in` where the last pass has fewer pieces than threads.
  struct ARows {
    RowSource src;
    Reg token, q;
    std::optional<Pred> in;
  };

  int threads() const { return 32 * t_.warps; }
  // One A stage: steps x tokens x 4 lanes x 8 bytes (a fragment's two pairs).
  std::int64_t stage_bytes() const { return static_cast<std::int64_t>(steps_) * tokens_ * kLanesPerRow * 8; }
  bool fp4() const { return p_.ab_dtype == DType::e2m1; }
  // Scale bytes a piece needs: 16 FP8 codes or 32 E2M1 codes at vec 32 lie
  // in one block; 32 E2M1 codes at vec 16 in two.
  int piece_scales() const { return fp4() && p_.vec == 16 ? 2 : 1; }
  std::int64_t piece_codes() const { return chunk_ / kLanesPerRow; }
  // A piece's bytes (32 codes): 32 of FP8, 16 of E2M1; loaded 16 at a time.
  int piece_bytes() const { return fp4() ? 16 : 32; }
  int piece_words() const { return piece_bytes() / 4; }

  // Rows past `rows` read the last row (their sums are never stored).
  RowSource source(const Reg& data, const ScaleFactorLayout& layout, const MatrixStrides& s, std::int64_t rows,
                   const Reg& row, const Reg& piece) {
    Reg r = k_.reg(u32);
    k_.min(r, row, imm(rows - 1));
    Reg bytes = r * imm(code_bytes(p_.ab_dtype, s.row)) + batch_ * imm(code_bytes(p_.ab_dtype, s.batch)) +
                (piece * imm(piece_bytes()));
    Reg wide = k_.reg(u64);
    k_.cvt(wide, bytes);
    const std::int64_t k_tiles = layout.k_tiles();
    // The layout's byte of row r, K block kb: l·RM·RK·512 + (r/128)·RK·512
    // + (kb/4)·512 + (r%32)·16 + ((r/32)%4)·4 + kb%4; the K block's part is
    // added per chunk (load_piece), with the piece's first block.
    Reg scale_row = batch_ * imm(layout.row_tiles() * k_tiles * 512) + ((r >> 7u) * imm(k_tiles * 512)) +
                    ((r & 31u) << 4) + (((r >> 5u) & 3u) << 2);
    return {data + wide, scale_row};
  }

  // Loads one row's piece of chunk `chunk`: 16 bytes of codes (read-only
  // path: nothing writes A or B during the launch) and its scale bytes.
  void load_piece(const RowSource& src, const Reg& scales, const Reg& piece, const Reg& chunk, const Piece& into) {
    Reg offset = k_.reg(u64);
    k_.mul_wide(offset, chunk, imm(kLanesPerRow * piece_bytes()));
    Reg address = src.codes + offset;
    for (int w = 0; w < piece_words(); w += 4)
      k_.ld(Space::global, b32, Regs(into.words.begin() + w, into.words.begin() + w + 4), at(address, 4 * w),
            {.nc = true});
    // The piece's first K block: (chunk·codes per chunk + piece·codes per piece) / vec.
    Reg kb = ((chunk * imm(chunk_)) + (piece * imm(piece_codes()))) >> imm(std::countr_zero(static_cast<unsigned>(p_.vec)));
    Reg at_byte = src.scale_row + ((kb >> 2u) << 9) + (kb & 3u);
    Reg wide = k_.reg(u64);
    k_.cvt(wide, at_byte);
    Reg narrow = k_.reg(u16);
    // Two blocks (E2M1 at vec 16): kb is even, so both bytes are in one aligned u16.
    k_.ld(Space::global, piece_scales() == 2 ? u16 : u8, narrow, at(scales + wide), {.nc = true});
    k_.cvt(into.scales, narrow);
  }

  // B's pieces of chunk `chunk` into ring set `set`, where the split has it.
  void load_b(const std::vector<RowSource>& rows, const std::vector<Piece>& set, const Reg& chunk, const Reg& c1) {
    k_.if_then(chunk < c1, [&] {
      for (std::size_t r = 0; r < rows.size(); ++r) load_piece(rows[r], psfb_, piece_, chunk, set[r]);
    });
  }

  // The bf16 pairs of `pieces` (each 2·steps_ registers, in BlockCodes'
  // order: for FP8 codes 2p, 2p + 1 in pair p; for E2M1 codes 8j + i and
  // 8j + i + 4 in pair 4j + i), exactly: one multiply per pair where every
  // scale folds and (FP8) no code is NaN or inf, else the exact slow way.
  std::vector<Regs> convert(const std::vector<const Piece*>& pieces) {
    std::vector<Regs> out;
    for (std::size_t i = 0; i < pieces.size(); ++i) out.push_back(k_.regs(b32, 2 * steps_));
    std::vector<Reg> scales;
    std::vector<Regs> words;
    for (const Piece* pc : pieces) {
      scales.push_back(pc->scales);
      words.push_back(pc->words);
    }
    auto run = [&](bool folded) {
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        Reg f0 = codes_.scale_factor(pieces[i]->scales, 0, piece_scales(), folded);
        Reg f1 = piece_scales() == 2 ? codes_.scale_factor(pieces[i]->scales, 1, 2, folded) : f0;
        if (fp4()) {
          codes_.dequant_fp4(pieces[i]->words, Regs{f0, f1}, out[i], folded);
          continue;
        }
        for (int w = 0; w < piece_words(); w += 4)  // 16 codes, 8 pairs at a time
          codes_.dequant_fp8(Regs(pieces[i]->words.begin() + w, pieces[i]->words.begin() + w + 4), f0,
                             Regs(out[i].begin() + 2 * w, out[i].begin() + 2 * w + 8), folded);
      }
    };
    Pred fast = fp4() ? codes_.scales_fold(scales, piece_scales())
                      : Pred(codes_.scales_fold(scales, piece_scales()) && codes_.codes_finite(words));
    k_.if_else(fast, [&] { run(true); }, [&] { run(false); });
    return out;
  }

  // A's pieces of chunk `chunk` into `into` (one per ARows of this thread).
  void load_a(const std::vector<ARows>& rows, const std::vector<Piece>& into, const Reg& chunk) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto load = [&] { load_piece(rows[i].src, psfa_, rows[i].q & 3u, chunk, into[i]); };
      if (rows[i].in)
        k_.if_then(*rows[i].in, load);
      else
        load();
    }
  }

  // A's pieces (load_a), converted into `stage`: piece q (token q / 4, lane
  // q % 4) stores its pairs 2j, 2j + 1 at [j][token][lane] (8 bytes each),
  // where the fragment loads of step j find them. Tokens past M store zeros
  // (their scales may be anything, NaN included).
  void convert_a(const std::vector<ARows>& rows, const std::vector<Piece>& pieces, const Reg& stage) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const ARows& a = rows[i];
      auto body = [&] {
        std::vector<Regs> pairs = convert({&pieces[i]});
        Pred token_in = a.token < imm(p_.m);
        for (Reg& r : pairs[0]) k_.selp(r, r, 0u, token_in);
        Reg at_piece = stage + (((a.token << 2) + (a.q & 3u)) << 3);
        for (int j = 0; j < steps_; ++j)
          k_.st(Space::shared, b32, at(at_piece, static_cast<std::int64_t>(j) * tokens_ * kLanesPerRow * 8),
                Regs{pairs[0][static_cast<std::size_t>(2 * j)], pairs[0][static_cast<std::size_t>(2 * j + 1)]});
      };
      if (a.in)
        k_.if_then(*a.in, body);
      else
        body();
    }
  }

  // One chunk's mma: B's pieces of `set` converted to the A fragments of
  // each k16 step (PTX ISA 9.7.14.5.8, m16n8k16 A: a0 row g, columns 2t,
  // 2t + 1; a1 row g + 8; a2, a3 the same at columns + 8), A's from `stage`
  // as the B fragments (b0 columns 2t, 2t + 1 of token g; b1 at + 8).
  void multiply(const std::vector<Piece>& set, const Reg& stage, std::vector<Regs>& acc, int n_tiles) {
    std::vector<const Piece*> pieces;
    for (const Piece& p : set) pieces.push_back(&p);
    const std::vector<Regs> pairs = convert(pieces);
    Reg lane_stage = stage + (lane_ << 3);
    for (int j = 0; j < steps_; ++j) {
      std::vector<Regs> b;
      for (int nt = 0; nt < n_tiles; ++nt) {
        b.push_back(k_.regs(b32, 2));
        k_.ld(Space::shared, b32, b.back(), at(lane_stage, (static_cast<std::int64_t>(j) * tokens_ * kLanesPerRow + nt * 32) * 8));
      }
      for (int i = 0; i < t_.row_tiles; ++i) {
        const Regs& lo = pairs[static_cast<std::size_t>(2 * i)];      // row g
        const Regs& hi = pairs[static_cast<std::size_t>(2 * i + 1)];  // row g + 8
        const std::size_t e = static_cast<std::size_t>(2 * j);
        Regs a{lo[e], hi[e], lo[e + 1], hi[e + 1]};
        for (int nt = 0; nt < n_tiles; ++nt) {
          Regs& d = acc[static_cast<std::size_t>(i * n_tiles + nt)];
          k_.mma_sync(MmaShape::m16n8k16, bf16, bf16, f32, d, a, b[static_cast<std::size_t>(nt)], d);
        }
      }
    }
  }

  const GemmAmaxProblem& p_;
  SkinnyGemmAmaxTiling t_;
  Kernel k_;
  BlockCodes codes_;
  int tokens_;
  std::int64_t chunk_;
  int steps_;
  std::int64_t chunks_, per_split_ = 1;
  Reg tid_, lane_, batch_, tile_, row0_, piece_, psfb_, psfa_, workspace_;
};

}  // namespace

std::size_t skinny_gemm_amax_counter_offset(const GemmAmaxProblem& p, const SkinnyGemmAmaxTiling& t) {
  const std::int64_t rows = skinny_gemm_amax_cta_rows(t);
  const std::int64_t units = (p.n + rows - 1) / rows * p.l;
  const std::int64_t partial_floats = 32LL * t.warps * t.row_tiles * (skinny_gemm_amax_tokens(p) / 8) * 4;
  return static_cast<std::size_t>(units * t.splits * partial_floats * 4);
}

std::size_t skinny_gemm_amax_workspace_bytes(const GemmAmaxProblem& p, const SkinnyGemmAmaxTiling& t) {
  if (t.splits == 1) return 0;
  const std::int64_t rows = skinny_gemm_amax_cta_rows(t);
  return skinny_gemm_amax_counter_offset(p, t) + static_cast<std::size_t>((p.n + rows - 1) / rows * p.l * 4);
}

ptx::Module build_skinny_gemm_amax(const GemmAmaxProblem& problem, const SkinnyGemmAmaxTiling& tiling) {
  return SkinnyKernel(problem, tiling).build();
}

}  // namespace warpforge::ops
