#include "sm80_forward_kernel.hpp"

#include <cmath>
#include <limits>

#include "sm80_mask.hpp"
#include "sm80_softmax.hpp"
#include "sm80_tiles.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::ops {

using namespace dsl;
using namespace attention_sm80;
using runtime::DType;

std::string Sm80AttentionSpec::kernel_name() const {
  return "warpforge_attention_fwd_sm80_" + std::string(runtime::name(dtype)) + "_d" +
         std::to_string(head_dim) + "_" + std::to_string(block_m) + "x" + std::to_string(block_n) +
         (varlen ? "_varlen" : "") + (has_lse ? "_lse" : "") + (window_left ? "_wl" : "") +
         (window_right ? "_wr" : "") + (top_left ? "_tl" : "");
}

Sm80AttentionSpec sm80_attention_spec(const AttentionProblem& p) {
  Sm80AttentionSpec s;
  s.dtype = p.dtype;
  s.head_dim = static_cast<int>(p.head_dim);
  // 64 x 64 blocks: at head_dim 256 the O accumulator alone is 128
  // registers a thread, and the three staged tiles take 96 KB.
  s.block_m = 64, s.block_n = 64;
  s.has_lse = p.has_lse;
  take_mask_flags(s, p);
  return s;
}

ptx::Module build_sm80_attention_forward(const Sm80AttentionSpec& s) {
  Kernel k(s.kernel_name(), Target::sm_80);
  const Type in = s.dtype == DType::f16 ? f16 : bf16;
  const int threads = s.threads(), D = s.head_dim, BM = s.block_m, BN = s.block_n;

  Reg pq = k.param_ptr("Q"), pk = k.param_ptr("K"), pv = k.param_ptr("V"), po = k.param_ptr("O"),
      plse = k.param_ptr("lse"), cu_q = k.param_ptr("cu_seqlens_q"), cu_k = k.param_ptr("cu_seqlens_k");
  Reg seq_q = k.param(u32, "seq_q"), seq_k = k.param(u32, "seq_k"), group = k.param(u32, "group");
  auto strides = [&](const char* t) {
    std::string n(t);
    return std::array<Reg, 3>{k.param(u64, n + "_batch"), k.param(u64, n + "_head"),
                              k.param(u64, n + "_row")};
  };
  auto sq = strides("q"), sk = strides("k"), sv = strides("v"), so = strides("o"),
       slse = strides("lse");
  Reg scale_log2 = k.param(f32, "scale_log2");
  Reg window_left = k.param(s32, "window_left"), window_right = k.param(s32, "window_right");
  k.reqntid(static_cast<std::uint32_t>(threads));
  Shared smem = k.dynamic_shared("smem", 128);

  Reg tid = k.sreg(SReg::tid_x), lane = k.sreg(SReg::laneid);
  Reg warp = tid >> 5;
  Reg q_block = k.sreg(SReg::ctaid_x), h = k.sreg(SReg::ctaid_y), b = k.sreg(SReg::ctaid_z);
  Reg kv_head = k.div(h, group);
  const Extent qs = sequence_extent(k, s.varlen, cu_q, b, seq_q), ks = sequence_extent(k, s.varlen, cu_k, b, seq_k);
  Reg m0 = (q_block * BM).as(s32);
  k.if_then(m0 >= qs.length, [&] { k.exit(); });

  // This CTA's rows of Q, O and lse, and its KV head's K and V.
  Reg q_row0 = (qs.first + m0).as(u32), k_row0 = ks.first.as(u32);
  Reg q_ptr = element_address(k, pq, element_offset(k, b, sq[0], h, sq[1], q_row0, sq[2]), 2);
  Reg o_ptr = element_address(k, po, element_offset(k, b, so[0], h, so[1], q_row0, so[2]), 2);
  Reg k_ptr = element_address(k, pk, element_offset(k, b, sk[0], kv_head, sk[1], k_row0, sk[2]), 2);
  Reg v_ptr = element_address(k, pv, element_offset(k, b, sv[0], kv_head, sv[1], k_row0, sv[2]), 2);
  auto row_bytes = [&](const Reg& stride) {
    Reg r = k.reg(u64);
    k.shl(r, stride, 1);
    return r;
  };
  Reg q_row_bytes = row_bytes(sq[2]), o_row_bytes = row_bytes(so[2]), k_row_bytes = row_bytes(sk[2]),
      v_row_bytes = row_bytes(sv[2]);

  // The mask (query0 and key0 are the thread's, set below), and the key
  // blocks any row of this CTA sees: [block_lo, block_hi).
  Reg rows_valid = qs.length - m0;  // s32; rows at or past it are padding
  Reg diag = mask_diagonal(k, s.top_left, qs.length, ks.length);
  MaskGeometry mask{.len_k = ks.length,
                    .diag = diag,
                    .left = s.window_left,
                    .right = s.window_right,
                    .window_left = window_left,
                    .window_right = window_right};
  const KeyBlocks kb = key_blocks(k, mask, m0, k.min(rows_valid, BM), BN);
  const Reg& block_lo = kb.lo;
  const Reg& block_hi = kb.hi;
  Reg blocks = block_hi - block_lo;

  Reg smem_base = k.address_of(smem);
  const PanelTile sQ{smem_base, BM, D}, sK{smem_base + sQ.bytes(), BN, D},
      sV{smem_base + (sQ.bytes() + BN * D * 2), BN, D};
  // The warp's 16 rows of Q: panels keep block_m rows apart.
  const PanelTile sQ_warp{sQ.base + warp * (16 * 32), BM, D};
  auto stage_kv = [&](const PanelTile& dst, const Reg& base, const Reg& rb, const Reg& block) {
    Reg first = block * BN;
    Reg offset = k.reg(u64);
    k.mul_wide(offset, first, 1);
    k.mul(offset, offset, rb);
    stage_rows(k, dst, base + offset, rb, ks.length - first, tid, threads);
    k.cp_async_commit();
  };

  stage_rows(k, sQ, q_ptr, q_row_bytes, rows_valid, tid, threads);
  k.if_then(blocks > 0, [&] { stage_kv(sK, k_ptr, k_row_bytes, block_hi - 1); });
  k.cp_async_commit();

  // Registers: S = Q·Kᵀ of one key block, O in 16-column parts, the
  // operands of one k-step, P as the A operand, the running max and sum of
  // the thread's two rows (its rows lane/4 and lane/4 + 8 of the warp's 16).
  auto acc_s = c_tile(k, 16, BN, "s");
  std::vector<tile::RegisterTile> acc_o, p;
  for (int i = 0; i < D / 16; ++i) acc_o.push_back(c_tile(k, 16, 16, "o" + std::to_string(i) + "_"));
  for (int i = 0; i < BN / 16; ++i) p.push_back(a_tile(k, 16, 16, in, "p" + std::to_string(i) + "_"));
  auto q_frag = a_tile(k, 16, 16, in, "qf"), k_frag = b_tile(k, 16, BN, in, "kf"),
       v_frag = b_tile(k, 16, 16, in, "vf");
  for (const auto& part : acc_o)
    for (const Reg& r : part.regs()) k.mov(r, imm_f32(0.0f));
  OnlineSoftmax softmax(k, scale_log2);
  const tile::LaneCoords lc = tile::emit_lane_coords(k, acc_s.steps(), lane);
  Reg lane_row = warp * 16 + lc.row;  // the thread's first row within the CTA's block

  // Rows are queries: the thread's value 0 at (lane_row, lc.col).
  mask.query0 = m0 + lane_row.as(s32);
  mask.key0 = lc.col.as(s32);  // plus the block's first key, below

  // Key blocks from the last to the first (the blocks the mask cuts come first).
  k.for_range(0, blocks, 1, [&](Reg it) {
    Reg block = (block_hi - 1) - it;
    k.cp_async_wait_all();  // K of this block (and Q) have landed
    k.bar_sync(0);          // ... for every thread; V of the last block is read by all
    stage_kv(sV, v_ptr, v_row_bytes, block);
    panel_products(k, acc_s, sQ_warp, sK, q_frag, k_frag);  // S = Q·Kᵀ
    Reg key0 = block * BN;
    k.if_then(mask_cuts(mask, m0, BM, key0, BN), [&] {
      MaskGeometry at_block = mask;
      at_block.key0 = mask.key0 + key0;
      apply_mask(k, acc_s, at_block);
    });
    softmax.update(k, acc_s, acc_o);
    k.cp_async_wait_all();  // V has landed; every thread is done with K
    k.bar_sync(0);
    k.if_then(block > block_lo, [&] { stage_kv(sK, k_ptr, k_row_bytes, block - 1); });
    pack_accumulator_as_a(k, acc_s, p);
    for (int kk = 0; kk < BN / 16; ++kk)
      for (int panel = 0; panel < D / 16; ++panel) {
        tile::warp::copy(k, sV.panel_view(k, panel, 16 * kk, true), v_frag);
        tile::warp::gemm(k, acc_o[panel], p[kk], v_frag, acc_o[panel], 1.0f, 1.0f);
      }
  });
  k.cp_async_wait_all();

  // Epilogue: O / l and lse = (max·scale·log2(e) + log2(l))·ln(2) per row;
  // a row that saw no key gets O = 0 and lse = -inf.
  const OnlineSoftmax::Result rows = softmax.finish(k);
  const Regs& inverse = rows.inverse;
  Regs lse = k.regs(f32, 2, "lse_row");
  for (int half = 0; half < 2; ++half)
    k.mul(lse[half], rows.lse_log2[half], imm_f32(static_cast<float>(std::log(2.0))));
  const auto o_half = row_halves(acc_o[0]);
  for (const auto& part : acc_o)
    for (std::size_t v = 0; v < o_half.size(); ++v) k.mul(part.regs()[v], part.regs()[v], inverse[o_half[v]]);
  Reg warp_rows = (warp * 16).as(s32);
  Reg warp_row0 = k.reg(u64);
  k.mul_wide(warp_row0, warp * 16, 1);
  store_rows(k, acc_o, o_ptr + warp_row0 * o_row_bytes, o_row_bytes, rows_valid - warp_rows, in, std::nullopt, lane);
  if (s.has_lse) {
    Reg lse_row_bytes = k.reg(u64);
    k.shl(lse_row_bytes, slse[2], 2);
    Reg lse_warp = element_address(k, plse, element_offset(k, b, slse[0], h, slse[1], q_row0 + warp * 16, slse[2]), 4);
    store_row_values(k, lse, lse_warp, lse_row_bytes, rows_valid - warp_rows, lane);
  }
  return k.module();
}

}  // namespace warpforge::ops
