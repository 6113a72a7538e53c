#include "sm90a_gemm_amax_kernel.hpp"

#include <limits>
#include <utility>

#include "sm90a_gemm_amax_design.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {
namespace sm90a_amax {

AmaxDesign::AmaxDesign(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t)
    : p_(p), t_(t), k_(sm90a_gemm_amax_name(p, t), Target::sm_90a), codes_(k_, p) {
  if (t.tile_n != 64 && t.tile_n != 128 && t.tile_n != 256)
    throw OpsError("sm90a gemm_amax kernel: tile_n " + std::to_string(t.tile_n) + "; it takes 64, 128 or 256");
  const std::int64_t codes = sm90a_gemm_amax_codes(t);
  const std::int64_t kblocks = (p.k + codes - 1) / codes, per_split = (kblocks + t.splits - 1) / t.splits;
  if (t.splits < 1 || (t.splits - 1) * per_split >= kblocks)
    throw OpsError("sm90a gemm_amax kernel: " + std::to_string(t.splits) + " K splits of " + std::to_string(kblocks) +
                   " K blocks; every split needs at least one");
}

void AmaxDesign::refuse_converting_only() const {
  if (t_.tile_n == 256)
    throw OpsError("sm90a gemm_amax kernel: tile_n 256 takes converting warpgroups (no fp8_mma, no "
                   "dequantizer warpgroups)");
  if (t_.cluster_m != 1)
    throw OpsError("sm90a gemm_amax kernel: cluster_m " + std::to_string(t_.cluster_m) +
                   "; it takes 1, or 2 with converting warpgroups");
}

tile::WarpSpecializedConfig AmaxDesign::raw_config(std::uint32_t raw_full, std::uint32_t raw_empty) const {
  tile::WarpSpecializedConfig c;
  c.consumers = kConsumers;
  c.stages = t_.raw_stages;
  c.full_barriers = raw_full;
  c.empty_barriers = raw_empty;
  c.stage_bytes = raw_stage_bytes();
  c.cluster_m = t_.cluster_m;
  c.dependent_launch = false;
  // Split-K: each consumer warpgroup's 64 x tile_n sums (split_k_reduction.hpp).
  if (t_.splits > 1) c.split_k = tile::WarpSpecializedConfig::SplitK{sm90a_gemm_amax_partial_bytes(t_)};
  return c;
}

std::uint32_t AmaxDesign::raw_stage_bytes() const {
  return static_cast<std::uint32_t>(kTileM + b_rows()) * raw_row_bytes() +
         static_cast<std::uint32_t>(1 + sm90a_gemm_amax_sfb_pieces(t_)) * kScalePiece;
}

void AmaxDesign::params(tile::WarpSpecialized& ws) {
  ws_ = &ws;
  map_a_p_ = k_.param_bytes("map_a", 128, 64);
  map_b_p_ = k_.param_bytes("map_b", 128, 64);
  map_sfa_p_ = k_.param_bytes("map_sfa", 128, 64);
  map_sfb_p_ = k_.param_bytes("map_sfb", 128, 64);
  c_ = k_.param_ptr("C", runtime::bits(p_.c_dtype) / 8);
  amax_ = k_.param_ptr("amax", 4);
}

void AmaxDesign::prologue(tile::WarpSpecialized& ws) {
  base_ = ws.smem_base();
  tid_ = ws.tid();
  consumers_ = ws.named_barrier(128 * kConsumers);
  map_a_ = k_.param_generic_address(map_a_p_);
  map_b_ = k_.param_generic_address(map_b_p_);
  map_sfa_ = k_.param_generic_address(map_sfa_p_);
  map_sfb_ = k_.param_generic_address(map_sfb_p_);
}

void AmaxDesign::initialize(tile::WarpSpecialized&) {
  for (const Reg& map : {map_a_, map_b_, map_sfa_, map_sfb_}) k_.prefetch_tensormap(map);
  k_.st(Space::shared, u32, at(base_, amax_slot_), 0u);
}

// Output tiles of 128 x tile_n in groups of kGroupRows along M, N-major
// inside a group, batch outermost (the bf16 sm90a kernel's order), the
// shapes compiled in; in a cluster a unit is both CTAs' M-neighbouring
// tiles. With split-K, item u is split u % splits of unit u / splits: a
// tile's splits run on neighbouring CTAs, at the same time.
std::unique_ptr<tile::WorkSource> AmaxDesign::work_source(tile::WarpSpecialized&) {
  const tile::TileSchedulerOptions o{.tile_m = kTileM,
                                     .tile_n = t_.tile_n,
                                     .tile_k = sm90a_gemm_amax_codes(t_),
                                     .cluster_m = t_.cluster_m,
                                     .group_rows = kGroupRows,
                                     .splits = t_.splits};
  return std::make_unique<tile::TileScheduler>(k_, o, imm(p_.m), imm(p_.n), imm(p_.k), imm(p_.l));
}

RawStage AmaxDesign::raw_stage(const Reg& stage, std::uint32_t raw_a, std::uint32_t raw_stride, std::uint32_t sf,
                               std::uint32_t sf_stride, const tile::Tile& t) const {
  Reg codes = base_ + raw_a + stage * raw_stride, scales = base_ + sf + stage * sf_stride;
  return {codes, codes + imm(kTileM * raw_row_bytes()), scales, scales + kScalePiece, t.n0};
}

// A K-major box of one K block's bytes (64 E2M1 codes, 32 bytes, or 128 FP8
// codes with fp8_mma) x rows per operand, and the 512-byte piece of each
// scale tensor that holds the tile's 128 rows x 4 scale blocks around this
// K block (the 128x4 layout keeps them together); zero-filled bytes past
// the tensor count toward the transaction bytes.
void AmaxDesign::load_raw(const RawStage& to, const Reg& full, const tile::Tile& t, const Reg& kb) {
  Reg kx = kb * raw_row_bytes();  // bytes along K
  k_.tma_load(at(to.a), map_a_, {kx, t.m0, t.batch}, at(full));
  k_.tma_load(at(to.b), map_b_, {kx, to.b0, t.batch}, at(full));
  // Piece (batch, row tile, K group) is rows 2·piece, 2·piece + 1 of the
  // scale bytes seen as 256-byte rows. A stage's codes are 2 or 4 scale
  // blocks (64 codes of vec 32, or 16; 128 of vec 32 with fp8_mma): a piece
  // holds 4.
  Reg group = (kb * imm(sm90a_gemm_amax_codes(t_) / p_.vec)) >> 2u;
  const ScaleFactorLayout sfa{p_.m, p_.k, p_.l, p_.vec}, sfb{p_.n, p_.k, p_.l, p_.vec};
  Reg piece_a = (t.batch * imm(sfa.row_tiles()) + (t.m0 >> 7)) * imm(sfa.k_tiles()) + group;
  Reg piece_b = (t.batch * imm(sfb.row_tiles()) + (to.b0 >> 7)) * imm(sfb.k_tiles()) + group;
  k_.tma_load(at(to.sfa), map_sfa_, {0u, piece_a << 1}, at(full));
  // A 256-row B tile takes the pieces of two row tiles (past N: zero fill,
  // or the next batch's scales, for sums nobody stores).
  for (int i = 0; i < sm90a_gemm_amax_sfb_pieces(t_); ++i)
    k_.tma_load(at(to.sfb, i * kScalePiece), map_sfb_, {0u, (piece_b + imm(i * sfb.k_tiles())) << 1}, at(full));
}

void AmaxDesign::consumer_registers_setup(tile::WarpSpecialized& ws) {
  cw_ = ws.warpgroup();
  leader_ = ws.leader();
  acc_ = k_.regs(f32, t_.tile_n / 2, "acc");
  thread_max_ = k_.mov(u32, 0u);
}

Reg AmaxDesign::stage_descriptor(const Reg& desc0, const Reg& stage, std::uint32_t stage_bytes) {
  Reg d = k_.reg(u64);
  k_.cvt(d, stage * (stage_bytes >> 4));
  k_.add(d, d, desc0);
  return d;
}

// |C| bits: unsigned order is value order, a positive NaN above +inf. Per
// warp (redux.sync), per CTA (a shared atomic), then one global atomic.
void AmaxDesign::consumer_teardown(tile::WarpSpecialized&) {
  Reg warp_max = k_.reg(u32);
  k_.redux_sync(Redux::max, warp_max, thread_max_);
  Reg cta_amax = base_ + amax_slot_;
  k_.if_then((tid_ & 31u) == 0u, [&] { k_.red(Space::shared, AtomOp::max, u32, at(cta_amax), warp_max); });
  consumers_->sync();
  k_.if_then(tid_ == 0u, [&] {
    Reg cta_max = k_.reg(u32);
    k_.ld(Space::shared, u32, cta_max, at(cta_amax));
    k_.red(Space::global, AtomOp::max, u32, at(amax_), cta_max);
  });
}

// Accumulator pair i of an m64nN wgmma (PTX ISA 9.7.15.5.1.1, the D
// fragment): row 16·warp + lane/4 + 8·((i/2) % 2) of the warpgroup's 64,
// columns 8·(i/4) + 2·(lane%4) + {0, 1}. The thread's two rows' addresses
// at its first column are computed once; the pairs are constants from them
// (registers are scarce beside 128 accumulators).
void AmaxDesign::epilogue(const tile::WorkItem& w) {
  const tile::Tile& t = w.tile;
  const Regs& acc = acc_;
  const Reg& cw = cw_;
  const Reg& thread_max = thread_max_;
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
void AmaxDesign::store_pair(const Reg& v0, const Reg& v1, const Reg& address, std::int64_t offset, const Pred& in0,
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

}  // namespace sm90a_amax

using namespace sm90a_amax;

std::uint32_t sm90a_gemm_amax_smem_bytes(runtime::DType ab, const Sm90aGemmAmaxTiling& t) {
  if (t.fp8_mma) return fp8_mma_smem_bytes(t);
  return t.dequant_warpgroups ? dequantized_smem_bytes(ab, t) : converting_smem_bytes(ab, t);
}

std::size_t sm90a_gemm_amax_workspace_bytes(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) {
  const std::int64_t tiles = (p.m + kTileM - 1) / kTileM * ((p.n + t.tile_n - 1) / t.tile_n) * p.l;
  return tile::split_k_workspace_bytes(static_cast<std::size_t>(tiles), t.splits, kConsumers,
                                       sm90a_gemm_amax_partial_bytes(t));
}

std::string sm90a_gemm_amax_name(const GemmAmaxProblem& p, const Sm90aGemmAmaxTiling& t) {
  return "gemm_amax_sm90a_" + std::string(runtime::name(p.ab_dtype)) + "_" + std::string(runtime::name(p.c_dtype)) +
         "_128x" + std::to_string(t.tile_n) + "_s" + std::to_string(t.stages) + "r" + std::to_string(t.raw_stages) +
         (t.fp8_mma ? "_fp8mma" : "_dq" + std::to_string(t.dequant_warpgroups)) +
         (t.splits > 1 ? "_k" + std::to_string(t.splits) : "") + (t.cluster_m > 1 ? "_c2" : "");
}

// Widest tiles first: the converting warpgroups' 128 x 256 where tiles are
// many, then 128 x 128 and 128 x 64 where they are few (and K splits).
const std::vector<const Sm90aGemmAmaxDesign*>& sm90a_gemm_amax_designs() {
  static const std::vector<const Sm90aGemmAmaxDesign*> designs{&converting_design(), &dequantized_design(),
                                                               &fp8_mma_design()};
  return designs;
}

// Each design refuses what it cannot run, naming what it takes.
ptx::Module build_sm90a_gemm_amax(const GemmAmaxProblem& problem, const Sm90aGemmAmaxTiling& tiling) {
  if (tiling.fp8_mma) return build_fp8_mma(problem, tiling);
  return tiling.dequant_warpgroups ? build_dequantized(problem, tiling) : build_converting(problem, tiling);
}

}  // namespace warpforge::ops
