// What the sm_90a GemmAmax designs share (sm90a_gemm_amax_kernel.hpp says
// what the kernel does). Each design is a file of its own on the
// warp-specialized template (tile/warp_specialized.hpp):
// sm90a_gemm_amax_fp8_mma.cpp (MXFP8 as FP8 wgmma on the codes),
// sm90a_gemm_amax_converting.cpp (three converting warpgroups, 128 x 256),
// sm90a_gemm_amax_dequantized.cpp (dequantizer warpgroups for B, A in
// register fragments). They share this base: the parameters, the raw
// stages' TMA loads (codes and scale pieces), the work source (the tile
// scheduler over the compiled-in shapes, split-K in the template), the
// epilogue (C and amax) and the scales' reading (sm90a_gemm_amax_codes.cpp).
// Private to src/ops/gemm_amax.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "block_codes.hpp"
#include "sm90a_gemm_amax_kernel.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/tile_scheduler.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops::sm90a_amax {

using namespace dsl;
using runtime::DType;

constexpr std::uint32_t kRow = 128;        // bytes per swizzled bf16 row (128-byte swizzle)
constexpr std::uint32_t kAtom = 8 * kRow;  // 8 rows: the swizzle pattern's repeat
constexpr int kTileM = kSm90aGemmAmaxTileM;
constexpr int kGroupRows = 16;  // output tiles per group along M, for L2 reuse
constexpr int kConsumers = 2;   // consumer warpgroups, 64 rows of the tile each
constexpr int kProducerWg = kConsumers;  // the producer warpgroup follows them (the template's roles)

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

// One row of an operand tile that a thread dequantizes: what its loads
// need that the K loop does not change.
struct RowReads {
  Reg raw;   // byte offset of the thread's codes in a raw stage
  Reg site;  // its first scale's byte in a stage's piece (scale_site), plus site_offset
  std::int64_t site_offset = 0;
};

// Which raw chunks a converting thread (a dequantizer or converting
// warpgroup's) takes: chunk_map in sm90a_gemm_amax_codes.cpp.
struct ChunkMap {
  int chunks, codes, row_step, scales;  // chunks per row, codes per chunk, rows per pass, scales per chunk
  std::uint32_t chunk_bytes;            // raw bytes of a chunk: 16, or 8 (E2M1 in a cluster)
  Reg c, row_in, swz;                   // the thread's chunk, first row, row % 8
};

// Where one raw stage's TMA loads land (shared addresses) and B's first row.
struct RawStage {
  Reg a, b, sfa, sfb;  // A's codes, B's codes, SFA's piece, SFB's piece(s)
  Reg b0;              // B's first row (n0, or a cluster rank's half)
};

class AmaxDesign : public tile::WarpSpecializedDesign {
 public:
  dsl::Kernel& kernel() override { return k_; }
  void params(tile::WarpSpecialized& ws) override;
  void prologue(tile::WarpSpecialized& ws) override;
  void initialize(tile::WarpSpecialized& ws) override;
  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized& ws) override;
  void finish(const tile::WorkItem& w) override { epilogue(w); }
  void consumer_teardown(tile::WarpSpecialized& ws) override;
  const Regs& partial_sums() const override { return acc_; }

 protected:
  // Checks what every design takes (TileError-free: OpsError naming the value).
  AmaxDesign(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t);
  // Refuses what only the converting design takes (tile_n 256, a pair
  // along M): the FP8 wgmma and dequantizer designs call it.
  void refuse_converting_only() const;

  // The template's configuration every design starts from: two consumer
  // warpgroups, the raw stages as the pipeline (its barriers at
  // raw_full/raw_empty), each stage's transaction bytes, split-K.
  tile::WarpSpecializedConfig raw_config(std::uint32_t raw_full, std::uint32_t raw_empty) const;
  // Bytes one raw stage brings: the rows' codes and the scale pieces.
  std::uint32_t raw_stage_bytes() const;
  // The raw loads of K block kb of the item's tile into `to`, signalling
  // `full`: one thread issues them.
  void load_raw(const RawStage& to, const Reg& full, const tile::Tile& t, const Reg& kb);
  // The raw stage `stage`'s default places (A's rows, then B's): raw stage
  // offsets from the base, and the pieces.
  RawStage raw_stage(const Reg& stage, std::uint32_t raw_a, std::uint32_t raw_stride, std::uint32_t sf,
                     std::uint32_t sf_stride, const tile::Tile& t) const;
  // The consumer thread's warpgroup, first thread and accumulators (64 x tile_n).
  void consumer_registers_setup(tile::WarpSpecialized& ws);

  bool fp4() const { return p_.ab_dtype == DType::e2m1; }
  std::uint32_t raw_row_bytes() const { return sm90a_gemm_amax_raw_row_bytes(p_.ab_dtype, t_); }
  int b_rows() const { return sm90a_gemm_amax_b_rows(t_); }
  // The wgmma descriptor of stage `stage`'s tile, stages `stage_bytes`
  // apart: the start address field counts 16-byte units.
  Reg stage_descriptor(const Reg& desc0, const Reg& stage, std::uint32_t stage_bytes);

  // Scales (sm90a_gemm_amax_codes.cpp): a row's first scale byte in a
  // stage's 512-byte piece; its `count` bytes in K block kb; the bf16x2
  // multipliers BlockCodes takes (0 past K).
  Reg scale_site(const Reg& piece_row, const Reg& code0);
  Reg scale_bytes(const Reg& sf_stage, const RowReads& row, const Reg& kb, int count);
  Regs scale_factors(const Reg& bytes, int count, const Reg& kb, const Reg& code0, bool folded);
  // E2M1 words to bf16 pairs times their scales (one multiply per pair where the scales fold).
  void dequant_words(const Regs& w, const Reg& bytes, int count, const Reg& kb, const Reg& code0,
                     const Regs& out);
  // Converting thread `t` of `threads` (its index from the first converting thread).
  ChunkMap chunk_map(const Reg& t, int threads, bool clustered);

  const GemmAmaxProblem& p_;
  Sm90aGemmAmaxTiling t_;
  Kernel k_;
  BlockCodes codes_;  // the codes' and scales' conversions to bf16
  tile::WarpSpecialized* ws_ = nullptr;
  Reg base_, tid_;
  Reg map_a_, map_b_, map_sfa_, map_sfb_, c_, amax_;
  std::uint32_t amax_slot_ = 0;  // the CTA's amax in shared memory (its layout's)
  // The consumers'.
  Reg cw_;
  Pred leader_;
  Regs acc_;
  Reg thread_max_;  // this thread's max |C| bits
  std::optional<tile::NamedBarrier> consumers_;  // every consumer thread: the CTA's amax is whole

 private:
  void epilogue(const tile::WorkItem& w);
  void store_pair(const Reg& v0, const Reg& v1, const Reg& address, std::int64_t offset, const Pred& in0,
                  const Pred& in1);

  ParamRef map_a_p_, map_b_p_, map_sfa_p_, map_sfb_p_;
};

// The designs, each in its file: its account (what it takes), building the
// kernel or refusing the tiling (OpsError naming what the design takes),
// its shared-memory bytes.
const Sm90aGemmAmaxDesign& fp8_mma_design();
const Sm90aGemmAmaxDesign& converting_design();
const Sm90aGemmAmaxDesign& dequantized_design();
ptx::Module build_fp8_mma(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t);
ptx::Module build_converting(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t);
ptx::Module build_dequantized(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t);
std::uint32_t fp8_mma_smem_bytes(const Sm90aGemmAmaxTiling& t);
std::uint32_t converting_smem_bytes(DType ab, const Sm90aGemmAmaxTiling& t);
std::uint32_t dequantized_smem_bytes(DType ab, const Sm90aGemmAmaxTiling& t);

}  // namespace warpforge::ops::sm90a_amax
