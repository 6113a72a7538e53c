#include "decode_kernel.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "sm80_softmax.hpp"
#include "sm80_tiles.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::ops {
namespace {

using namespace dsl;
using namespace attention_sm80;
using runtime::DType;

const Src minus_infinity = imm_f32(-std::numeric_limits<float>::infinity());
const float ln2 = static_cast<float>(std::log(2.0));

int log2_of(int x) { return std::countr_zero(static_cast<unsigned>(x)); }

// The exponent offset of a log2-domain maximum: 0 where it is -inf, so that
// 2^(x - offset) stays 0 (not NaN) for x = -inf.
Reg finite_or_zero(Kernel& k, const Reg& m) {
  Reg out = k.reg(f32);
  k.selp(out, imm_f32(0.0f), m, k.setp(Cmp::eq, m, minus_infinity));
  return out;
}

// What the last split's combine reads and writes (build_decode_split's
// registers).
struct CombineArgs {
  const Reg &partial, &o, &lse;
  const std::vector<Reg>&so, &slse;
  const Reg &splits, &heads_q, &b, &g, &tid, &lane, &warp, &flag;
};

// The splits of (sequence b, KV head g) meet in the CTA that finishes last,
// found by a counter of the pair in the workspace after the partials (each
// thread's partial stores, a gpu-scope fence, the CTA's barrier, then one
// atomic add; the last CTA fences again before it reads: PTX ISA 8.8's
// release and acquire patterns). It merges its rows' partials by their
// log-sum-exps (log2 units) in one pass over the splits: each warp a row at
// a time, each lane head_dim/32 adjacent columns, 8 or 16 splits' loads in
// flight, a running (max m, sum, O) rescaled as the online softmax's:
//   O = Σ_s 2^(lse_s - m)·O_s / Σ_s 2^(lse_s - m),  L = m + log2 Σ_s 2^(lse_s - m).
// It leaves the counter at 0 for the next launch.
void combine_if_last(Kernel& k, const DecodeSpec& s, const CombineArgs& a) {
  const Type in = s.dtype == DType::f16 ? f16 : bf16;
  const int D = s.head_dim, per_lane = D / 32, NQ = s.q_tokens, R = s.rows();
  // Splits whose loads are in flight together: a batch of one at 8k keys
  // has ~33 splits, three passes; head_dim 256 keeps eight (registers).
  const int warps = 4, unroll = D == 256 ? 8 : 16;
  Reg rows_total = k.sreg(SReg::nctaid_z) * a.heads_q * NQ;
  Reg lse_area = k.reg(u64), counter_area = k.reg(u64), counter_index = k.reg(u64);
  k.mul_wide(lse_area, rows_total * a.splits, D * 4);
  k.mul_wide(counter_area, rows_total * a.splits, (D + 1) * 4);
  k.mul_wide(counter_index, a.b * k.sreg(SReg::nctaid_y) + a.g, 4);
  Reg counter = a.partial + counter_area + counter_index;

  k.fence(FenceSem::acq_rel, Scope::gpu);
  k.bar_sync(0);
  k.if_then(a.tid == 0, [&] {
    Reg arrived = k.reg(u32), last = k.reg(u32);
    k.atom(Space::global, AtomOp::add, u32, arrived, at(counter), 1u);
    k.selp(last, 1u, 0u, arrived == a.splits - 1);
    k.st(Space::shared, u32, at(a.flag), last);
  });
  k.bar_sync(0);
  Reg last = k.reg(u32);
  k.ld(Space::shared, u32, last, at(a.flag));
  k.if_then(last == 1, [&] {
    k.fence(FenceSem::acq_rel, Scope::gpu);
    k.if_then(a.tid == 0, [&] { k.st(Space::global, u32, at(counter), 0u); });
    Reg row0 = (a.b * a.heads_q + a.g * s.group) * NQ;  // the pair's rows are consecutive
    Reg lane_cols = k.reg(u64);
    k.mul_wide(lane_cols, a.lane, per_lane * 4);
    Reg final_split = a.splits - 1;
    k.for_range(a.warp, R, warps, [&](Reg r) {
      Reg first = k.reg(u64), o_first = k.reg(u64);
      k.mul_wide(first, (row0 + r) * a.splits, 4);
      k.mul_wide(o_first, (row0 + r) * a.splits, D * 4);
      Reg lse_row = a.partial + lse_area + first, o_row = a.partial + o_first + lane_cols;
      Reg m = k.mov(f32, minus_infinity), sum = k.mov(f32, imm_f32(0.0f));
      Regs acc = k.regs(f32, per_lane, "acc");
      for (const Reg& x : acc) k.mov(x, imm_f32(0.0f));
      k.for_range(k.mov(u32, 0), a.splits, unroll, [&](Reg sp0) {
        Regs w(unroll);
        std::vector<Regs> o_s;
        for (int u = 0; u < unroll; ++u) {
          Reg sp = k.min(sp0 + u, final_split);  // past the last split: its values again, weight 0
          Reg at_s = k.reg(u64), at_o = k.reg(u64);
          k.mul_wide(at_s, sp, 4);
          k.mul_wide(at_o, sp, D * 4);
          w[u] = k.reg(f32);
          k.ld(Space::global, f32, w[u], at(lse_row + at_s), {.cache = Cache::cg});
          o_s.push_back(k.regs(f32, per_lane, "part" + std::to_string(u) + "_"));
          for (int i = 0; i < per_lane; i += 4) {
            const int n = std::min(4, per_lane - i);
            Regs part(o_s[u].begin() + i, o_s[u].begin() + i + n);
            if (n == 1) k.ld(Space::global, f32, part[0], at(o_row + at_o, i * 4), {.cache = Cache::cg});
            else k.ld(Space::global, f32, part, at(o_row + at_o, i * 4), {.cache = Cache::cg});
          }
        }
        Reg m_new = k.reg(f32), x = k.reg(f32);
        k.mov(m_new, m);
        for (int u = 0; u < unroll; ++u) {
          k.selp(w[u], minus_infinity, w[u], sp0 + u > final_split);
          k.max(m_new, m_new, w[u]);
        }
        Reg offset = finite_or_zero(k, m_new);
        k.sub(x, m, offset);
        k.ex2_approx(x, x);
        k.mul(sum, sum, x);
        for (const Reg& c : acc) k.mul(c, c, x);
        for (int u = 0; u < unroll; ++u) {
          k.sub(x, w[u], offset);
          k.ex2_approx(x, x);
          k.add(sum, sum, x);
          for (int i = 0; i < per_lane; ++i) k.fma(acc[i], x, o_s[u][i], acc[i]);
        }
        k.mov(m, m_new);
      });
      Reg inverse = k.reg(f32), total = k.reg(f32);
      k.rcp(inverse, sum, {.round = Round::rn});
      k.selp(inverse, imm_f32(0.0f), inverse, k.setp(Cmp::eq, sum, imm_f32(0.0f)));
      k.lg2_approx(total, sum);  // -inf where no split saw a key
      k.add(total, total, finite_or_zero(k, m));
      Reg head = a.g * s.group + k.div(r, NQ), t = k.reg(u32);
      k.rem(t, r, NQ);
      Reg out = element_address(k, a.o, element_offset(k, a.b, a.so[0], head, a.so[1], t, a.so[2]), 2);
      Reg col = k.reg(u64);
      k.mul_wide(col, a.lane, per_lane * 2);
      out = out + col;
      for (int i = 0; i < per_lane; i += 2) {
        Reg packed = k.reg(b32);
        k.mul(acc[i], acc[i], inverse);
        k.mul(acc[i + 1], acc[i + 1], inverse);
        k.cvt_pack(in == f16 ? f16x2 : bf16x2, packed, acc[i + 1], acc[i]);
        k.st(Space::global, b32, at(out, i * 2), packed);
      }
      if (s.has_lse) {
        Reg natural = k.reg(f32);
        k.mul(natural, total, imm_f32(ln2));
        Reg where = element_address(k, a.lse, element_offset(k, a.b, a.slse[0], head, a.slse[1], t, a.slse[2]), 4);
        k.guarded(a.lane == 0, [&] { k.st(Space::global, f32, at(where), natural); });
      }
    });
  });
}

}  // namespace

int DecodeSpec::row_tiles() const {
  const int tiles = (rows() + 15) / 16;
  return tiles <= 1 ? 1 : tiles <= 2 ? 2 : 4;
}

int DecodeSpec::shared_bytes() const {
  const int q = row_tiles() * 16 * head_dim * 2;
  const int ring = stages * 2 * block_n * head_dim * 2;
  // The warps' merge: per warp its O values (head_dim / 2 a lane) and two lse.
  const int merge = key_groups() > 1 ? 4 * (head_dim / 2 + 2) * 32 * 4 : 0;
  return q + std::max(ring, merge);
}

std::string DecodeSpec::kernel_name() const {
  return "warpforge_attention_decode_sm80_" + std::string(runtime::name(dtype)) + "_d" + std::to_string(head_dim) +
         "_g" + std::to_string(group) + "_t" + std::to_string(q_tokens) + "_n" + std::to_string(block_n) + "s" +
         std::to_string(stages) + (causal ? "_causal" : "") + (window_left ? "_wl" : "") + (has_lse ? "_lse" : "") +
         (split_output ? "_split" : "") + (sm90a ? "_sm90a" : "");
}

ptx::Module build_decode_split(const DecodeSpec& s) {
  Kernel k(s.kernel_name(), s.sm90a ? Target::sm_90a : Target::sm_80);
  const Type in = s.dtype == DType::f16 ? f16 : bf16;
  const int D = s.head_dim, BN = s.block_n, KG = s.key_groups(), KW = BN / KG, NQ = s.q_tokens;
  const int RP = s.row_tiles() * 16;

  Reg pq = k.param_ptr("Q"), pk = k.param_ptr("k_cache"), pv = k.param_ptr("v_cache"),
      table = k.param_ptr("block_table"), lens = k.param_ptr("kv_lens"), po = k.param_ptr("O"),
      plse = k.param_ptr("lse"), partial = k.param_ptr("partial");
  auto u64s = [&](std::initializer_list<const char*> names) {
    std::vector<Reg> r;
    for (const char* n : names) r.push_back(k.param(u64, n));
    return r;
  };
  auto sq = u64s({"q_batch", "q_head", "q_row"}), sk = u64s({"k_page", "k_slot", "k_head"}),
       sv = u64s({"v_page", "v_slot", "v_head"}), so = u64s({"o_batch", "o_head", "o_row"}),
       slse = u64s({"lse_batch", "lse_head", "lse_row"});
  Reg table_row = k.param(u64, "table_row");
  Reg page_size = k.param(u32, "page_size"), splits = k.param(u32, "splits"), heads_q = k.param(u32, "heads_q");
  Reg scale_log2 = k.param(f32, "scale_log2");
  Reg window_left = k.param(s32, "window_left");
  k.reqntid(128);
  Shared smem = k.dynamic_shared("smem", 128);

  Reg tid = k.sreg(SReg::tid_x), lane = k.sreg(SReg::laneid);
  Reg warp = tid >> 5;
  Reg row_tile = warp >> log2_of(KG), key_group = warp & (KG - 1);
  Reg split = k.sreg(SReg::ctaid_x), g = k.sreg(SReg::ctaid_y), b = k.sreg(SReg::ctaid_z);

  // The sequence's kv_len, then Q's copies while it comes (they need none of
  // it: one round trip less before the first keys are asked for).
  Reg b4 = k.reg(u64);
  k.mul_wide(b4, b, 4);
  Reg kv_len = k.reg(s32);
  k.ld(Space::global, s32, kv_len, at(lens + b4));
  // Q: row r is query head g·group + r / q_tokens, token r % q_tokens.
  Reg smem_base = k.address_of(smem);
  const PanelTile sQ{smem_base, RP, D};
  const int rows = s.rows();
  stage_rows(
      k, sQ,
      [&](const Reg& r) {
        Reg head = g * s.group + k.div(r, NQ);
        Reg token = k.reg(u32);
        k.rem(token, r, NQ);
        return element_address(k, pq, element_offset(k, b, sq[0], head, sq[1], token, sq[2]), 2);
      },
      pq, k.mov(s32, rows), tid, 128);
  k.cp_async_commit();

  // The split's keys: [key_begin, key_end), blocks of BN from `start`.
  Reg per_split = k.div(kv_len + splits.as(s32) - 1, splits.as(s32));
  Reg chunk = k.div(per_split + (BN - 1), BN) * BN;
  Reg key_begin = split.as(s32) * chunk;
  Reg key_end = k.min(key_begin + chunk, kv_len);
  Reg diag = kv_len - NQ;  // token t sees keys up to diag + t
  Reg start = key_begin;
  if (s.window_left) {
    // The first key any token sees, rounded down to a block.
    Reg first = k.max(diag - window_left, 0);
    start = k.max(key_begin, k.div(first, BN) * BN);
  }
  Reg blocks = k.div(key_end - start + (BN - 1), BN);

  // The ring of K and V blocks.
  const int slot_bytes = 2 * BN * D * 2;
  Reg ring = smem_base + sQ.bytes();
  Reg table_base = k.reg(u64);
  {
    Reg b64 = k.reg(u64);
    k.cvt(u64, u32, b64, b);
    k.mul(b64, b64, table_row);
    k.mad(table_base, b64, 4, table);
  }
  auto stage_block = [&](const Reg& block, const Reg& slot) {
    Reg key0 = start + block * BN;
    Reg valid = key_end - key0;
    Reg slot_base = ring + slot * slot_bytes;
    // A row's page, looked up once for K and V: the copies call row_address
    // for the same rows, in the same order, for both.
    std::vector<std::pair<Reg, Reg>> page_of_row;  // physical page, slot in it
    for (int which = 0; which < 2; ++which) {
      const auto& st = which == 0 ? sk : sv;
      const Reg& cache = which == 0 ? pk : pv;
      std::size_t call = 0;
      stage_rows_by_lines(
          k, PanelTile{slot_base + which * BN * D * 2, BN, D},
          [&](const Reg& r) {
            if (which == 0) {
              // Key r of the block, clamped into the split for the page lookup.
              Reg key = k.min(key0 + r.as(s32), key_end - 1).as(u32);
              Reg page = k.reg(u32), in_page = k.reg(u32);
              k.div(page, key, page_size);
              k.rem(in_page, key, page_size);
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
    k.if_then(blocks > i, [&] { stage_block(k.mov(s32, i), k.mov(u32, i)); });
    k.cp_async_commit();
  }

  // The warp's rows of Q, held in registers for every block.
  k.cp_async_wait(s.stages - 1);
  k.bar_sync(0);
  std::vector<tile::RegisterTile> q_frag, acc_o, p;
  const PanelTile sQ_warp{sQ.base + row_tile * (16 * 32), RP, D};
  for (int panel = 0; panel < D / 16; ++panel) {
    q_frag.push_back(a_tile(k, 16, 16, in, "q" + std::to_string(panel) + "_"));
    tile::warp::copy(k, sQ_warp.panel_view(k, panel, 0, true), q_frag.back());
    acc_o.push_back(c_tile(k, 16, 16, "o" + std::to_string(panel) + "_"));
    for (const Reg& r : acc_o.back().regs()) k.mov(r, imm_f32(0.0f));
  }
  for (int i = 0; i < KW / 16; ++i) p.push_back(a_tile(k, 16, 16, in, "p" + std::to_string(i) + "_"));
  auto acc_s = c_tile(k, 16, KW, "s");
  auto k_frag = b_tile(k, 16, KW, in, "kf"), v_frag = b_tile(k, 16, 16, in, "vf");
  OnlineSoftmax softmax(k, scale_log2);

  // The thread's two rows: their tokens (for the causal mask) and whether they exist.
  const tile::LaneCoords lc = tile::emit_lane_coords(k, acc_s.steps(), lane);
  Regs token(2), row(2);
  for (int half = 0; half < 2; ++half) {
    row[half] = row_tile * 16 + lc.row + 8 * half;
    token[half] = k.reg(u32);
    k.rem(token[half], row[half], NQ);
  }
  const auto s_half = row_halves(acc_s);
  const auto s_cols = value_cols(acc_s);

  k.for_range(0, blocks, 1, [&](Reg it) {
    k.cp_async_wait(s.stages - 2);
    k.bar_sync(0);
    Reg next = it + (s.stages - 1);
    Reg next_slot = k.reg(u32);
    k.rem(next_slot, next.as(u32), s.stages);
    k.if_then(next < blocks, [&] { stage_block(next, next_slot); });
    k.cp_async_commit();
    Reg slot = k.reg(u32);
    k.rem(slot, it.as(u32), s.stages);
    Reg slot_base = ring + slot * slot_bytes + key_group * (KW * 32);
    const PanelTile sK{slot_base, BN, D}, sV{slot_base + BN * D * 2, BN, D};
    for (int panel = 0; panel < D / 16; ++panel) {
      tile::warp::copy(k, sK.panel_view(k, panel, 0, false), k_frag);
      if (panel == 0) tile::warp::gemm(k, acc_s, q_frag[panel], k_frag, std::nullopt, 1.0f, 0.0f);
      else tile::warp::gemm(k, acc_s, q_frag[panel], k_frag, acc_s, 1.0f, 1.0f);
    }
    // The mask, in the blocks it cuts: keys past the split, right of a
    // token's diagonal (causal), left of its window.
    Reg key0 = start + it * BN;
    Pred cut = key0 + BN > key_end;
    if (s.causal) cut = cut || (key0 + (BN - 1) > diag);
    if (s.window_left) cut = cut || (key0 < diag + (NQ - 1) - window_left);
    k.if_then(cut, [&] {
      Reg key = key0 + key_group.as(s32) * KW + lc.col.as(s32);
      Reg keys_left = key_end - key;
      Regs right_room(2), left_room(2);
      for (int half = 0; half < 2; ++half) {
        Reg last = diag + token[half].as(s32);  // the row's last visible key
        right_room[half] = last - key;
        if (s.window_left) left_room[half] = key - (last - window_left);
      }
      for (std::size_t v = 0; v < s_half.size(); ++v) {
        const std::int64_t dc = s_cols[v];
        Pred seen = keys_left > dc;
        if (s.causal) seen = seen && (right_room[s_half[v]] >= dc);
        if (s.window_left) seen = seen && (left_room[s_half[v]] >= -dc);
        k.selp(acc_s.regs()[v], acc_s.regs()[v], minus_infinity, seen);
      }
    });
    softmax.update(k, acc_s, acc_o);
    pack_accumulator_as_a(k, acc_s, p);
    for (int kk = 0; kk < KW / 16; ++kk)
      for (int panel = 0; panel < D / 16; ++panel) {
        tile::warp::copy(k, sV.panel_view(k, panel, 16 * kk, true), v_frag);
        tile::warp::gemm(k, acc_o[panel], p[kk], v_frag, acc_o[panel], 1.0f, 1.0f);
      }
  });
  k.cp_async_wait_all();
  k.bar_sync(0);

  // Each warp's result, normalised; the warps of a row tile merged by
  // their log-sum-exps (log2 units) through shared memory, into the first.
  OnlineSoftmax::Result result = softmax.finish(k);
  const auto o_half = row_halves(acc_o[0]);
  for (const auto& part : acc_o)
    for (std::size_t v = 0; v < o_half.size(); ++v) k.mul(part.regs()[v], part.regs()[v], result.inverse[o_half[v]]);
  Regs lse = result.lse_log2;
  // The output of rows that exist: O and lse, or the split's partials.
  auto write_rows = [&] {
    const tile::LaneCoords olc = tile::emit_lane_coords(k, acc_o[0].steps(), lane);
    // Each pair of adjacent columns of the thread's row `half` (the m16n8
    // accumulator's c0, c1: PTX ISA 9.7.14.5.14), with its column offset.
    auto row_pairs = [&](int half, const std::function<void(const Reg&, const Reg&, std::int64_t)>& body) {
      for (int panel = 0; panel < D / 16; ++panel)
        for (std::size_t v = 0; v + 1 < o_half.size(); v += 2)
          if (o_half[v] == half)
            body(acc_o[panel].regs()[v], acc_o[panel].regs()[v + 1],
                 16 * panel + acc_o[panel].steps().value_offset(static_cast<std::int64_t>(v)).second);
    };
    for (int half = 0; half < 2; ++half) {
      Reg r = row_tile * 16 + olc.row + 8 * half;
      Reg head = g * s.group + k.div(r, NQ);
      Reg t = k.reg(u32);
      k.rem(t, r, NQ);
      Pred inside = r < rows;
      Pred lse_writer = inside && ((lane & 3) == 0);
      if (!s.split_output) {
        Reg out = element_address(k, po, element_offset(k, b, so[0], head, so[1], t, so[2]), 2);
        Reg col = k.reg(u64);
        k.mul_wide(col, olc.col, 2);
        out = out + col;
        k.guarded(inside, [&] {
          row_pairs(half, [&](const Reg& x0, const Reg& x1, std::int64_t col) {
            Reg packed = k.reg(b32);
            k.cvt_pack(in == f16 ? f16x2 : bf16x2, packed, x1, x0);
            k.st(Space::global, b32, at(out, col * 2), packed);
          });
        });
        if (s.has_lse) {
          Reg natural = k.reg(f32);
          k.mul(natural, lse[half], imm_f32(ln2));
          Reg where = element_address(k, plse, element_offset(k, b, slse[0], head, slse[1], t, slse[2]), 4);
          k.guarded(lse_writer, [&] { k.st(Space::global, f32, at(where), natural); });
        }
      } else {
        // row·splits + split, row = (b·heads_q + head)·q_tokens + token.
        Reg global_row = (b * heads_q + head) * NQ + t;
        Reg index = global_row * splits + split;
        Reg o_index = k.reg(u64);
        k.mul_wide(o_index, index, D);
        Reg out = element_address(k, partial, o_index, 4);
        Reg col = k.reg(u64);
        k.mul_wide(col, olc.col, 4);
        out = out + col;
        k.guarded(inside, [&] {
          row_pairs(half, [&](const Reg& x0, const Reg& x1, std::int64_t col) {
            k.st(Space::global, f32, at(out, col * 4), Regs{x0, x1});
          });
        });
        Reg rows_total = k.sreg(SReg::nctaid_z) * heads_q * NQ;
        Reg lse_index = k.reg(u64), lse_base = k.reg(u64);
        k.mul_wide(lse_base, rows_total * splits, D * 4);
        k.mul_wide(lse_index, index, 4);
        Reg where = partial + lse_base + lse_index;
        k.guarded(lse_writer, [&] { k.st(Space::global, f32, at(where), lse[half]); });
      }
    }
  };
  // With several warps a row tile, the first writes the tile's merged rows.
  if (KG > 1) {
    const int values = D / 2;  // a lane's O values (16 x D over 32 lanes)
    Reg merge = ring;          // the ring is free: every block has been read
    Reg lane_bytes = lane << 2;
    auto lse_slot = [&](const Reg& w, int half) { return merge + (w * 2 + half) * 128 + lane_bytes; };
    Reg o_area = merge + 4 * 2 * 128;
    auto o_slot = [&](const Reg& w, int v) { return o_area + (w * values + v) * 128 + lane_bytes; };
    for (int half = 0; half < 2; ++half) k.st(Space::shared, f32, at(lse_slot(warp, half)), lse[half]);
    k.bar_sync(0);
    Reg first_warp = row_tile * KG;
    Regs weight(2);
    for (int half = 0; half < 2; ++half) {
      Regs all(KG);
      Reg m = k.reg(f32), sum = k.reg(f32), x = k.reg(f32);
      k.mov(m, minus_infinity);
      for (int w = 0; w < KG; ++w) {
        all[w] = k.reg(f32);
        k.ld(Space::shared, f32, all[w], at(lse_slot(first_warp + w, half)));
        k.max(m, m, all[w]);
      }
      Reg offset = finite_or_zero(k, m);
      k.mov(sum, imm_f32(0.0f));
      for (int w = 0; w < KG; ++w) {
        k.sub(x, all[w], offset);
        k.ex2_approx(x, x);
        k.add(sum, sum, x);
      }
      weight[half] = k.reg(f32);
      k.sub(x, lse[half], offset);
      k.ex2_approx(x, x);
      k.div(weight[half], x, sum);
      k.selp(weight[half], imm_f32(0.0f), weight[half], k.setp(Cmp::eq, sum, imm_f32(0.0f)));
      Reg log_sum = k.reg(f32);
      k.lg2_approx(log_sum, sum);
      k.add(lse[half], offset, log_sum);  // -inf where no warp saw a key
    }
    for (int panel = 0; panel < D / 16; ++panel) {
      const auto& part = acc_o[panel];
      for (std::size_t v = 0; v < o_half.size(); ++v) {
        k.mul(part.regs()[v], part.regs()[v], weight[o_half[v]]);
        k.st(Space::shared, f32, at(o_slot(warp, panel * static_cast<int>(o_half.size()) + static_cast<int>(v))),
             part.regs()[v]);
      }
    }
    k.bar_sync(0);
    k.if_then(key_group == 0, [&] {
      Reg x = k.reg(f32);
      for (int w = 1; w < KG; ++w)
        for (int panel = 0; panel < D / 16; ++panel) {
          const auto& part = acc_o[panel];
          for (std::size_t v = 0; v < o_half.size(); ++v) {
            k.ld(Space::shared, f32, x,
                 at(o_slot(first_warp + w, panel * static_cast<int>(o_half.size()) + static_cast<int>(v))));
            k.add(part.regs()[v], part.regs()[v], x);
          }
        }
      write_rows();
    });
  } else {
    write_rows();
  }

  if (s.split_output)
    combine_if_last(k, s,
                    {.partial = partial, .o = po, .lse = plse, .so = so, .slse = slse, .splits = splits,
                     .heads_q = heads_q, .b = b, .g = g, .tid = tid, .lane = lane, .warp = warp,
                     .flag = smem_base});
  return k.module();
}

}  // namespace warpforge::ops
