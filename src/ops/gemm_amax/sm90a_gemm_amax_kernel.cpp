#include "sm90a_gemm_amax_kernel.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "sm90a_gemm_amax_builder.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/tile/tile_scheduler.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {
namespace sm90a_amax {

ptx::Module AmaxKernel::build() {
  // setmaxnreg moves the producer's and the dequantizers' registers to the
  // consumers (consumer_registers): fp8_mma's loop keeps two partials and
  // two sets of scales beside the accumulators, the dequantizer's consumers
  // two sets of A fragments.
  k_.maxntid(sm90a_gemm_amax_threads(t_));
  k_.minnctapersm(1);  // a register cap at entry, which setmaxnreg needs
  if (clustered()) k_.reqnctapercluster(t_.cluster_m);
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
  raw_.emplace(tile::MbarrierArray(k_, base_, smem_.raw_full, t_.raw_stages),
               tile::MbarrierArray(k_, base_, smem_.raw_empty, t_.raw_stages));
  bf16_.emplace(tile::MbarrierArray(k_, base_, smem_.full, t_.stages),
                tile::MbarrierArray(k_, base_, smem_.empty, t_.stages));
  ready_.emplace(k_, base_, smem_.ready, t_.raw_stages);
  peer_full_.emplace(k_, base_, smem_.peer_full, t_.stages);
  tid_ = k_.sreg(SReg::tid_x);
  if (clustered()) {
    rank_ = k_.sreg(SReg::cluster_ctarank);
    // The partner's base (the same offset in its shared memory) and 128
    // rows back or on (the two ranks' stage layouts: clustered()).
    Reg partner = k_.reg(u32);
    k_.mapa_shared(partner, base_, rank_ ^ 1u);
    remote_ = partner - base_ + (rank_ << imm(7 + 8)) - imm(kTileM * kRow);
  }
  map_a_ = k_.param_generic_address(map_a_p_);
  map_b_ = k_.param_generic_address(map_b_p_);
  map_sfa_ = k_.param_generic_address(map_sfa_p_);
  map_sfb_ = k_.param_generic_address(map_sfb_p_);
  k_.if_then(tid_ == 0, [&] {
    for (const Reg& map : {map_a_, map_b_, map_sfa_, map_sfb_}) k_.prefetch_tensormap(map);
    // fp8_mma: a raw stage is freed by the consumers' wgmma and made ready
    // by the scale converters; otherwise the dequantizers free it.
    for (int st = 0; st < t_.raw_stages; ++st) {
      raw_->full().init(st, 1);
      // Without fp8_mma every consumer thread reads A's codes too. The
      // converting scheme's barrier per K block frees raw stages.
      if (!converting())
        raw_->empty().init(st, t_.fp8_mma ? kConsumers : 128 * (t_.dequant_warpgroups + kConsumers));
      if (t_.fp8_mma) ready_->init(st, kScaleConverters);
    }
    if (!t_.fp8_mma && !converting()) bf16_->init(128 * t_.dequant_warpgroups, kConsumers);
    // In a cluster: one arrival with the partner's bytes expected, and the copy's transaction (copy_to_partner).
    for (int st = 0; clustered() && st < t_.stages; ++st) peer_full_->init(st, 1);
    k_.st(Space::shared, u32, at(base_, smem_.amax), 0u);
    k_.fence_mbarrier_init();
  });
  if (clustered()) {  // the partner's barriers are initialised before anything reaches its shared memory
    k_.barrier_cluster_arrive();
    k_.barrier_cluster_wait();
  } else {
    k_.bar_sync(0);
  }
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
  if (clustered()) {  // no CTA leaves while its partner may still store or arrive into it
    k_.barrier_cluster_arrive();
    k_.barrier_cluster_wait();
  }
  return k_.module();
}

// Output tiles in groups of kGroupRows along M, N-major inside a group,
// batch outermost (the bf16 sm90a kernel's order). In a cluster a unit is
// both CTAs' M-neighbouring tiles, rank r taking the r-th.
// Unit u is split u % splits of tile u / splits: a tile's splits run on
// neighbouring CTAs, at the same time.
TileCoords AmaxKernel::tile_of(const Reg& work) {
  Reg unit = work, split = k_.mov(u32, 0u);
  if (t_.splits > 1) {
    k_.rem(split, work, imm(t_.splits));
    unit = k_.reg(u32);
    k_.div(unit, work, imm(t_.splits));
  }
  const tile::BlockRange ks = tile::split_range(k_, split, imm(split_kblocks_), imm(kblocks_));
  const tile::UnitCoords u =
      tile::grouped_raster(k_, unit, {imm(tiles_m_), imm(per_batch_), imm(group_span_)}, kGroupRows);
  Reg m0 = u.m * imm(kTileM * t_.cluster_m);
  // (%cluster_ctarank read again: a register held across the loops costs the consumers a spill.)
  if (clustered()) m0 = m0 + (k_.sreg(SReg::cluster_ctarank) << 7u);
  return {m0, u.n * imm(t_.tile_n), u.batch, unit, split, ks.begin, ks.end};
}

void AmaxKernel::for_each_tile(const std::function<void(const TileCoords&)>& body) {
  Reg unit = first_unit();
  Reg step = unit_step();
  k_.while_loop([&] { return unit < imm(per_batch_ * p_.l * t_.splits); },
                [&] {
                  body(tile_of(unit));
                  k_.add(unit, unit, step);
                });
}

// One thread issues every TMA load (load_stage): a K-major box of one K
// block's bytes (64 E2M1 codes, 32 bytes, or 128 FP8 codes with fp8_mma) x
// rows per operand, and the 512-byte piece of each scale tensor that holds
// the tile's 128 rows x 4 scale blocks around this K block (the 128x4
// layout keeps them together); zero-filled bytes past the tensor count
// toward the transaction bytes. In a cluster, B's rows of the CTA's rank
// (b_rows() of them) and their piece, at the rank's places (clustered()).
void AmaxKernel::producer() {
  k_.if_then(tid_ == 128 * kProducerWg, [&] {
    tile::PipelineState raw(k_, t_.raw_stages);
    for_each_tile([&](const TileCoords& t) {
      k_.for_nonempty_range(t.kb0, t.kb1, 1, [&](Reg kb) {
        raw_->acquire(raw);
        load_stage(t.m0, t.n0, t.batch, kb, raw.stage());
        ++raw;
      });
    });
  });
}

void AmaxKernel::load_stage(const Reg& m0, const Reg& n0, const Reg& batch, const Reg& kb, const Reg& stage) {
  Reg full = raw_->full().address(stage);
  k_.mbarrier_arrive_expect_tx(at(full), stage_rows() * raw_row_bytes() +
                                             (1 + sm90a_gemm_amax_sfb_pieces(t_)) * kScalePiece);
  Reg kx = kb * raw_row_bytes();  // bytes along K
  Reg raw = base_ + smem_.raw_a + stage * smem_.raw_stage, sf = base_ + smem_.raw_sfa + stage * smem_.sf_stage;
  Reg raw_a = raw, raw_b = raw + (smem_.raw_b - smem_.raw_a), sf_a = sf, sf_b = sf + kScalePiece, b0 = n0;
  if (clustered()) {  // rank 1: B's second half first
    Reg a_1st = a_first(), b_1st = a_1st ^ 1u;
    raw_a = raw + b_1st * imm(b_rows() * raw_row_bytes());
    raw_b = raw + a_1st * imm(kTileM * raw_row_bytes());
    sf_a = sf + b_1st * imm(kScalePiece);
    sf_b = sf + a_1st * imm(kScalePiece);
    b0 = n0 + rank_ * imm(b_rows());
  }
  k_.tma_load(at(raw_a), map_a_, {kx, m0, batch}, at(full));
  k_.tma_load(at(raw_b), map_b_, {kx, b0, batch}, at(full));
  // Piece (batch, row tile, K group) is rows 2·piece, 2·piece + 1 of the
  // scale bytes seen as 256-byte rows. A stage's codes are 2 or 4 scale
  // blocks (64 codes of vec 32, or 16; 128 of vec 32 with fp8_mma): a piece
  // holds 4.
  Reg group = (kb * imm(sm90a_gemm_amax_codes(t_) / p_.vec)) >> 2u;
  const ScaleFactorLayout sfa{p_.m, p_.k, p_.l, p_.vec}, sfb{p_.n, p_.k, p_.l, p_.vec};
  Reg piece_a = (batch * imm(sfa.row_tiles()) + (m0 >> 7)) * imm(sfa.k_tiles()) + group;
  Reg piece_b = (batch * imm(sfb.row_tiles()) + (b0 >> 7)) * imm(sfb.k_tiles()) + group;
  k_.tma_load(at(sf_a), map_sfa_, {0u, piece_a << 1}, at(full));
  // A 256-row B tile takes the pieces of two row tiles (past N: zero fill,
  // or the next batch's scales, for sums nobody stores).
  for (int i = 0; i < sm90a_gemm_amax_sfb_pieces(t_); ++i)
    k_.tma_load(at(sf_b, i * kScalePiece), map_sfb_,
                {0u, (piece_b + imm(i * sfb.k_tiles())) << 1}, at(full));
}

// Converting warpgroups: the first unit of the CTA, its first K block, raw stage 0.
AmaxKernel::LoadCursor AmaxKernel::load_cursor() {
  LoadCursor c{first_unit(), k_.reg(u32), k_.reg(u32), k_.reg(u32), k_.reg(u32), k_.reg(u32), k_.mov(u32, 0u)};
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
      k_.add(c.unit, c.unit, unit_step());
      k_.if_then(c.unit < imm(units), [&] {
        const TileCoords t = tile_of(c.unit);
        for (auto [to, from] : {std::pair{c.kb, t.kb0}, {c.kb1, t.kb1}, {c.m0, t.m0}, {c.n0, t.n0}, {c.batch, t.batch}})
          k_.mov(to, from);
      });
    });
  });
}

void AmaxKernel::consumer() {
  Reg cw = tid_ >> 7;
  Pred leader = (tid_ & 127) == 0;
  Regs acc = k_.regs(f32, t_.tile_n / 2, "acc");
  // K-major tiles of 128-byte rows (bf16, or the FP8 codes with fp8_mma):
  // 8-row atoms (SBO = one atom; LBO unused with the 128-byte swizzle,
  // encoded as 16).
  // (The converting warpgroups' bf16 stages hold A's 128 rows, then B's; on
  // a cluster's rank 1 B's, then A's.)
  Reg b_tiles = base_ + (t_.fp8_mma ? smem_.raw_b : smem_.b + (converting() ? kTileM * kRow : 0));
  Reg a_tiles = base_ + smem_.b;
  if (clustered()) {
    b_tiles = base_ + smem_.b + a_first() * imm(kTileM * kRow);
    a_tiles = base_ + smem_.b + (rank_ << imm(8 + 7));  // 256 rows of 128 bytes on rank 1
  }
  Reg desc_b0 = tile::warpgroup::smem_descriptor(k_, b_tiles, 16, kAtom);
  // The consumers' ring: fp8_mma's raw stages, the converting scheme's
  // bf16 stages (their parity unused), the dequantizers' bf16 stages.
  tile::PipelineState state(k_, t_.fp8_mma ? t_.raw_stages : t_.stages);
  Reg thread_max = k_.mov(u32, 0u);
  // (The converting scheme's three warpgroups keep the entry's even split.)
  if (!converting()) k_.setmaxnreg_inc(consumer_registers(t_));
  if (t_.fp8_mma) {
    Reg desc_a0 = tile::warpgroup::smem_descriptor(k_, base_ + smem_.raw_a + cw * (64 * kRow), 16, kAtom);
    const Regs part[2] = {k_.regs(f32, t_.tile_n / 4, "part"), k_.regs(f32, t_.tile_n / 4, "part_next")};
    for_each_tile([&](const TileCoords& t) {
      mainloop_fp8(acc, part, desc_a0, desc_b0, state, leader, cw, t);
      finish_tile(acc, t, cw, thread_max);
    });
  } else if (converting()) {
    Reg desc_a0 = tile::warpgroup::smem_descriptor(k_, a_tiles + cw * (64 * kRow), 16, kAtom);
    const ChunkMap m = chunk_map();
    const ConvertRows rows = convert_rows(m, true);
    tile::PipelineState raw(k_, t_.raw_stages);
    for_each_tile([&](const TileCoords& t) {
      mainloop_converting(&acc, desc_a0, desc_b0, state.stage(), state.phase() /* unused */, raw, m, rows, nullptr, t);
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
    tile::PipelineState raw(k_, t_.raw_stages);
    for_each_tile([&](const TileCoords& t) {
      mainloop_dequantized(acc, desc_b0, state, raw, leader, a, t);
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

// The wgmma descriptor of stage `stage`'s tile, stages `stage_bytes`
// apart: the start address field counts 16-byte units.
Reg AmaxKernel::stage_descriptor(const Reg& desc0, const Reg& stage, std::uint32_t stage_bytes) {
  Reg d = k_.reg(u64);
  k_.cvt(d, stage * (stage_bytes >> 4));
  k_.add(d, d, desc0);
  return d;
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

}  // namespace sm90a_amax

using namespace sm90a_amax;

Sm90aGemmAmaxSmem sm90a_gemm_amax_smem(runtime::DType ab, const Sm90aGemmAmaxTiling& t) {
  Sm90aGemmAmaxSmem m{};
  const std::uint32_t raw_row = sm90a_gemm_amax_raw_row_bytes(ab, t);
  // Converting warpgroups keep A's 128 rows in the bf16 stage too, before B's.
  const bool converting = !t.fp8_mma && t.dequant_warpgroups == 0;
  m.b_stage = t.fp8_mma ? 0 : static_cast<std::uint32_t>(t.tile_n + (converting ? kTileM : 0)) * kRow;
  // A raw stage is A's rows then B's (1024-aligned with fp8_mma: 128-byte
  // rows, tiles of 64 or 128 rows), a scale stage SFA's piece then SFB's.
  m.raw_stage = static_cast<std::uint32_t>(kTileM + sm90a_gemm_amax_b_rows(t)) * raw_row;
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
  m.peer_full = m.empty + 8 * stages;
  m.amax = m.peer_full + (t.cluster_m > 1 ? 8 * stages : 0);
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
         (t.splits > 1 ? "_k" + std::to_string(t.splits) : "") + (t.cluster_m > 1 ? "_c2" : "");
}

ptx::Module build_sm90a_gemm_amax(const GemmAmaxProblem& problem, const Sm90aGemmAmaxTiling& tiling) {
  return AmaxKernel(problem, tiling).build();
}

}  // namespace warpforge::ops
