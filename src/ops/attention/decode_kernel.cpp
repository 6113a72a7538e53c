#include "decode_kernel.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "decode_tma_kernel.hpp"
#include "decode_warps.hpp"
#include "sm80_tiles.hpp"
#include "warpforge/dsl.hpp"

namespace warpforge::ops {

using namespace dsl;
using namespace attention_sm80;

int DecodeSpec::row_tiles() const {
  const int tiles = (rows() + 15) / 16;
  return tiles <= 1 ? 1 : tiles <= 2 ? 2 : 4;
}

std::uint32_t DecodeSpec::stage_bytes() const { return static_cast<std::uint32_t>(2 * block_n * head_dim * 2); }

int DecodeSpec::shared_bytes() const {
  if (tma) return static_cast<int>(decode_tma_shared_bytes(*this));
  const int q = row_tiles() * 16 * head_dim * 2;
  const int ring = stages * 2 * block_n * head_dim * 2;
  return q + std::max(ring, decode::Warps::merge_bytes(*this));
}

std::string DecodeSpec::kernel_name() const {
  return "warpforge_attention_decode_" + std::string(tma ? "tma" + std::to_string(page_rows) + "_" : "sm80_") +
         std::string(runtime::name(dtype)) + "_d" + std::to_string(head_dim) +
         "_g" + std::to_string(group) + "_t" + std::to_string(q_tokens) + "_n" + std::to_string(block_n) + "s" +
         std::to_string(stages) + (causal ? "_causal" : "") + (window_left ? "_wl" : "") + (has_lse ? "_lse" : "") +
         (split_output ? "_split" : "") +
         (sm90a ? "_sm90a" : "");
}

ptx::Module build_decode_split(const DecodeSpec& s) {
  Kernel k(s.kernel_name(), s.sm90a ? Target::sm_90a : Target::sm_80);
  const int D = s.head_dim, BN = s.block_n, KW = BN / s.key_groups();
  const decode::Params p = decode::declare_params(k);
  k.reqntid(128);
  Shared smem = k.dynamic_shared("smem", 128);
  Reg tid = k.sreg(SReg::tid_x);
  Reg split = k.sreg(SReg::ctaid_x), g = k.sreg(SReg::ctaid_y), b = k.sreg(SReg::ctaid_z);

  // The sequence's kv_len, then Q's copies while it comes (they need none of
  // it: one round trip less before the first keys are asked for).
  Reg b4 = k.reg(u64);
  k.mul_wide(b4, b, 4);
  Reg kv_len = k.reg(s32);
  k.ld(Space::global, s32, kv_len, at(p.lens + b4));
  Reg smem_base = k.address_of(smem);
  const PanelTile sQ{smem_base, s.row_tiles() * 16, D};
  decode::stage_q(k, s, p, sQ, b, g, tid);
  k.cp_async_commit();
  const decode::SplitKeys keys = decode::split_keys(k, s, p, kv_len, split);

  // The ring of K and V blocks.
  const int slot_bytes = 2 * BN * D * 2;
  Reg ring = smem_base + sQ.bytes();
  Reg table_base = k.reg(u64);
  {
    Reg b64 = k.reg(u64);
    k.cvt(u64, u32, b64, b);
    k.mul(b64, b64, p.table_row);
    k.mad(table_base, b64, 4, p.table);
  }
  auto stage_block = [&](const Reg& block, const Reg& slot) {
    Reg key0 = keys.key_of(k, block);
    Reg valid = keys.key_end - key0;
    Reg slot_base = ring + slot * slot_bytes;
    // A row's page, looked up once for K and V: the copies call row_address
    // for the same rows, in the same order, for both.
    std::vector<std::pair<Reg, Reg>> page_of_row;  // physical page, slot in it
    for (int which = 0; which < 2; ++which) {
      const auto& st = which == 0 ? p.sk : p.sv;
      const Reg& cache = which == 0 ? p.k : p.v;
      std::size_t call = 0;
      stage_rows_by_lines(
          k, PanelTile{slot_base + which * BN * D * 2, BN, D},
          [&](const Reg& r) {
            if (which == 0) {
              // Key r of the block, clamped into the sequence for the page lookup.
              Reg key = k.min(key0 + r.as(s32), keys.key_end - 1).as(u32);
              Reg page = k.reg(u32), in_page = k.reg(u32);
              k.div(page, key, p.page_size);
              k.rem(in_page, key, p.page_size);
              Reg page64 = k.reg(u64);
              k.mul_wide(page64, page, 4);
              Reg physical = k.reg(u32);
              k.ld(Space::global, u32, physical, at(table_base + page64), {.nc = true});
              page_of_row.emplace_back(physical, in_page);
            }
            const auto& [physical, in_page] = page_of_row.at(call++);
            return element_address(k, cache, element_offset(k, physical, st[0], in_page, st[1], g, st[2]), 2);
          },
          cache, valid, tid, 128,
          !s.sm90a ? L2Prefetch::none : D * 2 >= 256 ? L2Prefetch::b256 : L2Prefetch::b128);
    }
  };
  for (int i = 0; i + 1 < s.stages; ++i) {
    k.if_then(keys.blocks > i, [&] { stage_block(k.mov(s32, i), k.mov(u32, i)); });
    k.cp_async_commit();
  }

  k.cp_async_wait(s.stages - 1);
  k.bar_sync(0);
  decode::Warps warps(k, s, p, sQ, tid);
  k.for_range(0, keys.blocks, 1, [&](Reg it) {
    k.cp_async_wait(s.stages - 2);
    k.bar_sync(0);
    Reg next = it + (s.stages - 1);
    Reg next_slot = k.reg(u32);
    k.rem(next_slot, next.as(u32), s.stages);
    k.if_then(next < keys.blocks, [&] { stage_block(next, next_slot); });
    k.cp_async_commit();
    Reg slot = k.reg(u32);
    k.rem(slot, it.as(u32), s.stages);
    Reg slot_base = ring + slot * slot_bytes + warps.key_group() * (KW * 32);
    warps.block(PanelTile{slot_base, BN, D}, PanelTile{slot_base + BN * D * 2, BN, D}, keys.key_of(k, it), keys);
  });
  k.cp_async_wait_all();
  k.bar_sync(0);
  // The ring is free for the warps' merge: every block has been read.
  warps.finish(ring, smem_base, [&] { k.bar_sync(0); });
  return k.module();
}

}  // namespace warpforge::ops
