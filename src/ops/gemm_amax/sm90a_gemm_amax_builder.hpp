// The sm_90a GemmAmax kernel's builder (sm90a_gemm_amax_kernel.hpp says
// what the kernel does): the class every part of it is a member of, its
// constants and the unit of work. Private to src/ops/gemm_amax; the parts:
// sm90a_gemm_amax_kernel.cpp (roles, tiles, TMA loads, epilogue, split-K),
// sm90a_gemm_amax_codes.cpp (codes and scales to bf16),
// sm90a_gemm_amax_converting.cpp (the converting warpgroups),
// sm90a_gemm_amax_dequantizer.cpp (dequantizer warpgroups, A in registers),
// sm90a_gemm_amax_fp8_mma.cpp (FP8 wgmma on the codes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "block_codes.hpp"
#include "sm90a_gemm_amax_kernel.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"

namespace warpforge::ops::sm90a_amax {

using namespace dsl;
using runtime::DType;

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
inline int scale_block_floats(bool a, int tile_rows) { return a ? tile_rows : tile_rows + 4 * kScalePad; }

inline std::uint32_t imm(std::int64_t v) { return static_cast<std::uint32_t>(v); }

// The setmaxnreg split of the CTA's registers: the entry's count (65536 per
// SM over the threads, a multiple of 8) for every thread, given back by the
// producer warpgroup (to 40) and the dequantizers (to kDequantRegisters),
// taken by the two consumer warpgroups (at most 232).
constexpr int kProducerRegisters = 40, kDequantRegisters = 64;
inline int consumer_registers(const Sm90aGemmAmaxTiling& t) {
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
      : p_(p), t_(t), smem_(sm90a_gemm_amax_smem(p.ab_dtype, t)), k_(sm90a_gemm_amax_name(p, t), Target::sm_90a), codes_(k_, p) {
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
    if (t.cluster_m != 1 && (t.cluster_m != 2 || !converting()))
      throw OpsError("sm90a gemm_amax kernel: cluster_m " + std::to_string(t.cluster_m) +
                     "; it takes 1, or 2 with converting warpgroups");
    // fp8_mma takes FP8 (MXFP8 only), the dequantizer warpgroups E2M1; the
    // converting warpgroups both.
    if ((fp4() && t.fp8_mma) || (!fp4() && !t.fp8_mma && !converting()))
      throw OpsError("sm90a gemm_amax kernel: " + std::string(runtime::name(p.ab_dtype)) + " data with " +
                     (t.fp8_mma ? "fp8_mma" : "dequantizer warpgroups") +
                     "; FP8 takes fp8_mma or converting warpgroups, E2M1 dequantizer or converting warpgroups");
    tiles_m_ = (p.m + kTileM * t.cluster_m - 1) / (kTileM * t.cluster_m);  // a cluster's M tiles count once
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
  // The CTA's first unit and the step to its next: its cluster's, in a cluster.
  Reg first_unit() { return k_.mov(u32, clustered() ? SReg::clusterid_x : SReg::ctaid_x); }
  Reg unit_step() { return k_.sreg(clustered() ? SReg::nclusterid_x : SReg::nctaid_x); }
  void for_each_tile(const std::function<void(const TileCoords&)>& body);
  bool fp4() const { return p_.ab_dtype == DType::e2m1; }
  // The consumers convert both operands (no dequantizer warpgroup).
  bool converting() const { return !t_.fp8_mma && t_.dequant_warpgroups == 0; }
  // Converting warpgroups in a 2-CTA cluster (Sm90aGemmAmaxTiling::cluster_m).
  // Rank 0's stages hold A's rows, then B's; rank 1's B's, then A's (raw:
  // its half of B first; bf16: all of B first), so in both a raw stage row
  // r lands on bf16 row r + 128 x rank, and a CTA's converted B rows lie
  // 128 rows before (rank 0) or after (rank 1) where its partner keeps them.
  bool clustered() const { return t_.cluster_m == 2; }
  int b_rows() const { return sm90a_gemm_amax_b_rows(t_); }
  // clustered(): 1 where A's rows come first in the stages (rank 0), else 0.
  Reg a_first() {
    Reg r = k_.reg(u32);
    k_.selp(r, 1u, 0u, rank_ == 0u);
    return r;
  }
  int stage_rows() const { return kTileM + b_rows(); }
  std::uint32_t raw_row_bytes() const { return sm90a_gemm_amax_raw_row_bytes(p_.ab_dtype, t_); }
  void producer();
  void scale_converter();
  void convert_scales(bool a, const Reg& piece, const Reg& out, const Reg& first_row, int tile_rows,
                      const Reg& kb, const Reg& thread);
  void dequantizer();
  // Which raw chunks a converting thread (a dequantizer or converting warpgroup's) takes.
  struct ChunkMap {
    int chunks, codes, row_step, scales;  // chunks per row, codes per chunk, rows per pass, scales per chunk
    std::uint32_t chunk_bytes;            // raw bytes of a chunk: 16, or 8 (E2M1 in a cluster)
    Reg c, row_in, swz;                   // the thread's chunk, first row, row % 8
  };
  ChunkMap chunk_map();
  // One row of an operand tile that a thread dequantizes: what its loads
  // need that the K loop does not change.
  struct RowReads {
    Reg raw;   // byte offset of the thread's codes in a raw stage
    Reg site;  // its first scale's byte in a stage's piece (scale_site), plus site_offset
    std::int64_t site_offset = 0;
  };
  Reg scale_site(const Reg& piece_row, const Reg& code0);
  // A row's scales in K block kb: `count` bytes (1, or 2 with 32 codes of
  // vec 16) as loaded (scale_bytes), and the bf16x2 multipliers
  // BlockCodes::dequant_fp4 takes (scale_factors: 0 past K).
  Reg scale_bytes(const Reg& sf_stage, const RowReads& row, const Reg& kb, int count);
  Regs scale_factors(const Reg& bytes, int count, const Reg& kb, const Reg& code0, bool folded);
  void dequant_b(const ChunkMap& m, const Reg& raw, const Reg& dst, const std::vector<RowReads>& rows,
                 const std::vector<Reg>& stores, const std::vector<Reg>& scales, const Reg& kb);
  void dequant_words(const Regs& w, const Reg& bytes, int count, const Reg& kb, const Reg& code0, const Regs& out);
  // Row passes over a tile_rows-row operand tile (one, partly idle, when the
  // tile has fewer rows than a pass: FP4 at tile_n 64).
  int passes(const ChunkMap& m, int tile_rows) const { return std::max(1, tile_rows / m.row_step); }
  void consumer();
  // Converting warpgroups: the rows a thread converts per K block, m.row_step
  // apart through the stage's 128 + tile_n (A's, then B's). The raw offset
  // and store of each are the first's plus constants (convert_rows).
  struct ConvertRows {
    Reg raw;  // the first row's codes in a raw stage
    // Each row's first scale byte in a scale stage: a register plus a
    // constant (the first row's register where the difference is the same
    // for every thread that takes the row: registers are scarce).
    std::vector<std::pair<Reg, std::int64_t>> sites;
    Reg store;  // the first row's first 16-byte chunk in a bf16 stage, before the xor of chunk q
  };
  ConvertRows convert_rows(const ChunkMap& m, bool consumer);
  void convert_stage(const ChunkMap& m, const ConvertRows& rows, tile::PipelineState& raw, const Reg& kb,
                     const Reg& cstage);
  void convert_group(const ChunkMap& m, const ConvertRows& rows, std::size_t first, std::size_t last, const Reg& raw,
                     const Reg& sf, const Reg& dst, const Reg& kb, const Reg& code0);
  void copy_to_partner(const Reg& converted);
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
  // `peer_phase`: the helper's phase of the peer_full barrier of `stage` (in a cluster).
  void mainloop_converting(const Regs* acc, const Reg& desc_a0, const Reg& desc_b0, const Reg& stage,
                           const Reg& peer_phase, tile::PipelineState& raw, const ChunkMap& m,
                           const ConvertRows& rows, LoadCursor* loads, const TileCoords& t);
  void converting_helper();
  Reg stage_descriptor(const Reg& desc0, const Reg& stage, std::uint32_t stage_bytes);
  // The consumer thread's two rows of A (r and r + 8) and its first code in each K block.
  struct ARows {
    RowReads rows[2];
    Reg code0;
  };
  void dequant_a_fragments(const ARows& a, const tile::PipelineState& raw, const Reg& kb, const Regs& out);
  void mainloop_dequantized(const Regs& acc, const Reg& desc_b0, tile::PipelineState& converted,
                            tile::PipelineState& raw, const Pred& leader, const ARows& a, const TileCoords& t);
  void mainloop_fp8(const Regs& acc, const Regs (&part)[2], const Reg& desc_a0, const Reg& desc_b0,
                    tile::PipelineState& raw, const Pred& leader, const Reg& cw, const TileCoords& t);
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
  BlockCodes codes_;  // the codes' and scales' conversions to bf16
  std::int64_t tiles_m_, per_batch_, group_span_, kblocks_, split_kblocks_;
  ParamRef map_a_p_, map_b_p_, map_sfa_p_, map_sfb_p_;
  Reg map_a_, map_b_, map_sfa_, map_sfb_, c_, amax_, workspace_;
  Reg base_, tid_;
  // The raw stages' barriers (codes and scales loaded: full; read: empty),
  // with fp8_mma the scales converted (ready); the dequantizers' bf16
  // stages' (full, empty); in a cluster the partner's rows landed (peer_full).
  std::optional<tile::MbarrierPipeline> raw_, bf16_;
  std::optional<tile::MbarrierArray> ready_, peer_full_;
  Reg rank_;    // clustered(): the CTA's rank in its cluster
  Reg remote_;  // clustered(): added to a converted B row's bf16 address, the partner's place for it
};

}  // namespace warpforge::ops::sm90a_amax
