#include "decode_warps.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::ops::decode {
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

// What a combine of the splits reads and writes.
struct CombineArgs {
  const Reg &partial, &o, &lse;
  const std::vector<Reg>&so, &slse;
  const Reg &splits, &heads_q, &b, &g, &tid, &lane, &warp, &flag;
  const std::function<void()>& sync;  // the four warps' barrier
};

// Merges each of the pair's rows' partials by their log-sum-exps (log2
// units) in one pass over the splits: each warp a row at a time, each lane
// head_dim/32 adjacent columns, 8 or 16 splits' loads in flight, a running
// (max m, sum, O) rescaled as the online softmax's:
//   O = Σ_s 2^(lse_s - m)·O_s / Σ_s 2^(lse_s - m),  L = m + log2 Σ_s 2^(lse_s - m),
// and writes O and lse. `row` gives split 0's lse and O (at the lane's
// columns) of the pair's row r in the workspace; split s's are s·4 and
// s·head_dim·4 bytes on.
void merge_splits(Kernel& k, const DecodeSpec& s, const CombineArgs& a,
                  const std::function<std::pair<Reg, Reg>(const Reg& r)>& row) {
  const Type in = s.dtype == DType::f16 ? f16 : bf16;
  const int D = s.head_dim, per_lane = D / 32, NQ = s.q_tokens, R = s.rows();
  // Splits whose loads are in flight together: a batch of one at 8k keys
  // has ~33 splits, three passes; head_dim 256 keeps eight (registers).
  const int warps = 4, unroll = D == 256 ? 8 : 16;
  const LdOpts opts{.cache = Cache::cg};
  auto offset = [&](const Reg& sp, int stride) {
    Reg bytes = k.reg(u64);
    k.mul_wide(bytes, sp, stride);
    return bytes;
  };
  Reg final_split = a.splits - 1;
  k.for_range(a.warp, R, warps, [&](Reg r) {
    const auto [lse_row, o_row] = row(r);
    Reg m = k.mov(f32, minus_infinity), sum = k.mov(f32, imm_f32(0.0f));
    Regs acc = k.regs(f32, per_lane, "acc");
    for (const Reg& x : acc) k.mov(x, imm_f32(0.0f));
    k.for_range(k.mov(u32, 0), a.splits, unroll, [&](Reg sp0) {
      Regs w(unroll);
      std::vector<Regs> o_s;
      for (int u = 0; u < unroll; ++u) {
        Reg sp = k.min(sp0 + u, final_split);  // past the last split: its values again, weight 0
        Reg at_o = o_row + offset(sp, D * 4);
        w[u] = k.reg(f32);
        k.ld(Space::global, f32, w[u], at(lse_row + offset(sp, 4)), opts);
        o_s.push_back(k.regs(f32, per_lane, "part" + std::to_string(u) + "_"));
        for (int i = 0; i < per_lane; i += 4) {
          const int n = std::min(4, per_lane - i);
          Regs part(o_s[u].begin() + i, o_s[u].begin() + i + n);
          if (n == 1) k.ld(Space::global, f32, part[0], at(at_o, i * 4), opts);
          else k.ld(Space::global, f32, part, at(at_o, i * 4), opts);
        }
      }
      Reg m_new = k.reg(f32), x = k.reg(f32);
      k.mov(m_new, m);
      for (int u = 0; u < unroll; ++u) {
        k.selp(w[u], minus_infinity, w[u], sp0 + u > final_split);
        k.max(m_new, m_new, w[u]);
      }
      Reg offset_m = finite_or_zero(k, m_new);
      k.sub(x, m, offset_m);
      k.ex2_approx(x, x);
      k.mul(sum, sum, x);
      for (const Reg& c : acc) k.mul(c, c, x);
      for (int u = 0; u < unroll; ++u) {
        k.sub(x, w[u], offset_m);
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
}

// The splits of (sequence b, KV head g) meet in the CTA that finishes last,
// found by a counter of the pair in the workspace after the partials (each
// thread's partial stores, a gpu-scope fence, the four warps' barrier, then
// one atomic add; the last CTA fences again before it reads: PTX ISA 8.8's
// release and acquire patterns), which merges them. It leaves the counter
// at 0 for the next launch.
void combine_if_last(Kernel& k, const DecodeSpec& s, const CombineArgs& a) {
  const int D = s.head_dim, per_lane = D / 32, NQ = s.q_tokens;
  Reg rows_total = k.sreg(SReg::nctaid_z) * a.heads_q * NQ;
  Reg lse_area = k.reg(u64), counter_area = k.reg(u64), counter_index = k.reg(u64);
  k.mul_wide(lse_area, rows_total * a.splits, D * 4);
  k.mul_wide(counter_area, rows_total * a.splits, (D + 1) * 4);
  k.mul_wide(counter_index, a.b * k.sreg(SReg::nctaid_y) + a.g, 4);
  Reg counter = a.partial + counter_area + counter_index;

  k.fence(FenceSem::acq_rel, Scope::gpu);
  a.sync();
  k.if_then(a.tid == 0, [&] {
    Reg arrived = k.reg(u32), last = k.reg(u32);
    k.atom(Space::global, AtomOp::add, u32, arrived, at(counter), 1u);
    k.selp(last, 1u, 0u, arrived == a.splits - 1);
    k.st(Space::shared, u32, at(a.flag), last);
  });
  a.sync();
  Reg last = k.reg(u32);
  k.ld(Space::shared, u32, last, at(a.flag));
  k.if_then(last == 1, [&] {
    k.fence(FenceSem::acq_rel, Scope::gpu);
    k.if_then(a.tid == 0, [&] { k.st(Space::global, u32, at(counter), 0u); });
    Reg row0 = (a.b * a.heads_q + a.g * s.group) * NQ;  // the pair's rows are consecutive
    Reg lane_cols = k.reg(u64);
    k.mul_wide(lane_cols, a.lane, per_lane * 4);
    merge_splits(k, s, a, [&](const Reg& r) {
      Reg first = k.reg(u64), o_first = k.reg(u64);
      k.mul_wide(first, (row0 + r) * a.splits, 4);
      k.mul_wide(o_first, (row0 + r) * a.splits, D * 4);
      return std::pair{a.partial + lse_area + first, a.partial + o_first + lane_cols};
    });
  });
}

// Rows [row0, ..) of panel `panel` of a tile of `rows` rows in panels of
// the spec's width, as ldmatrix's source (row-major for an operand whose
// rows are the tile's, column-major for one that reads it transposed).
tile::SharedTile panel_view(Kernel& k, const DecodeSpec& s, const PanelTile& t, int panel, int row0, bool row_major) {
  const int w = s.panel_width();
  if (w == 16) return t.panel_view(k, panel, row0, row_major);
  return tile::SharedTile{t.base + (panel * t.rows + row0) * w * 2, w, row_major,
                          layout::smem_swizzle(layout::SmemSwizzle::b128, 2)};
}

}  // namespace

Params declare_params(Kernel& k) {
  Params p;
  p.q = k.param_ptr("Q"), p.k = k.param_ptr("k_cache"), p.v = k.param_ptr("v_cache");
  p.table = k.param_ptr("block_table"), p.lens = k.param_ptr("kv_lens"), p.o = k.param_ptr("O");
  p.lse = k.param_ptr("lse"), p.partial = k.param_ptr("partial");
  auto u64s = [&](std::initializer_list<const char*> names) {
    std::vector<Reg> r;
    for (const char* n : names) r.push_back(k.param(u64, n));
    return r;
  };
  p.sq = u64s({"q_batch", "q_head", "q_row"}), p.sk = u64s({"k_page", "k_slot", "k_head"});
  p.sv = u64s({"v_page", "v_slot", "v_head"}), p.so = u64s({"o_batch", "o_head", "o_row"});
  p.slse = u64s({"lse_batch", "lse_head", "lse_row"});
  p.table_row = k.param(u64, "table_row");
  p.page_size = k.param(u32, "page_size"), p.table_width = k.param(u32, "table_width");
  p.splits = k.param(u32, "splits"), p.heads_q = k.param(u32, "heads_q");
  p.scale_log2 = k.param(f32, "scale_log2");
  p.window_left = k.param(s32, "window_left");
  return p;
}

Reg SplitKeys::key_of(Kernel& k, const Reg& j) const { return start + j * step; }

Reg first_block_key(Kernel& k, const DecodeSpec& s, const Reg& split) { return (split * s.block_n).as(s32); }

SplitKeys split_keys(Kernel& k, const DecodeSpec& s, const Params& p, const Reg& kv_len, const Reg& split) {
  const int BN = s.block_n;
  SplitKeys keys;
  keys.key_end = kv_len;
  keys.diag = kv_len - s.q_tokens;
  keys.start = first_block_key(k, s, split);
  keys.step = (p.splits * BN).as(s32);
  if (s.window_left) {
    // Blocks from the one holding the first key any token sees.
    Reg first = k.max(keys.diag - p.window_left, 0);
    keys.start = keys.start + k.div(first, BN) * BN;
  }
  // Blocks start, start + step, ... below kv_len: ceil((kv_len - start) / step).
  keys.blocks = k.div(k.max(kv_len - keys.start, 0) + keys.step - 1, keys.step);
  return keys;
}

void stage_q(Kernel& k, const DecodeSpec& s, const Params& p, const PanelTile& sQ, const Reg& b, const Reg& g,
             const Reg& tid) {
  // Row r is query head g·group + r / q_tokens, token r % q_tokens.
  const int NQ = s.q_tokens;
  auto row_address = [&](const Reg& r) {
    Reg head = g * s.group + k.div(r, NQ);
    Reg token = k.reg(u32);
    k.rem(token, r, NQ);
    return element_address(k, p.q, element_offset(k, b, p.sq[0], head, p.sq[1], token, p.sq[2]), 2);
  };
  if (s.panel_width() == 16) return stage_rows(k, sQ, row_address, p.q, k.mov(s32, s.rows()), tid, 128);
  // 64-column panels in the 128-byte swizzle: 16-byte piece c of row r at
  // panel c / 8, chunk (c % 8) ^ (r % 8) of the row (PTX ISA 5.5.7); rows
  // past Q's zero-filled (cp.async's src-size 0).
  const int chunks = sQ.head_dim / 8, pieces = sQ.rows * chunks;
  for (int i = 0; i < pieces; i += 128) {
    Reg piece = tid + i;
    Reg r = k.div(piece, chunks), c = k.reg(u32);
    k.rem(c, piece, chunks);
    k.if_then(piece < pieces, [&] {
      Reg dst = sQ.base + (c >> 3) * (sQ.rows * 128) + r * 128 + (((c & 7) ^ (r & 7)) << 4);
      Reg inside = k.reg(u32);
      k.selp(inside, 16u, 0u, r < s.rows());
      Reg src = k.reg(u64);
      k.selp(src, row_address(k.min(r, s.rows() - 1)), p.q, r < s.rows());
      Reg piece_bytes = k.reg(u64);
      k.mul_wide(piece_bytes, c, 16);
      k.cp_async(CpAsyncCache::cg, 16, at(dst), at(src + piece_bytes), Src(inside));
    });
  }
}

Warps::Warps(Kernel& k, const DecodeSpec& s, const Params& p, const PanelTile& sQ, const Reg& tid)
    : k_(k), s_(s), p_(p), tid_(tid) {
  const Type in = s.dtype == DType::f16 ? f16 : bf16;
  const int D = s.head_dim, KW = s.block_n / s.key_groups(), NQ = s.q_tokens;
  lane_ = k.sreg(SReg::laneid);
  warp_ = tid >> 5;
  row_tile_ = warp_ >> log2_of(s.key_groups());
  key_group_ = warp_ & (s.key_groups() - 1);
  split_ = k.sreg(SReg::ctaid_x), g_ = k.sreg(SReg::ctaid_y), b_ = k.sreg(SReg::ctaid_z);
  // The warp's rows of Q, held in registers for every block.
  const int W = s.panel_width();
  const PanelTile sQ_warp{sQ.base + row_tile_ * (16 * W * 2), sQ.rows, D};
  for (int panel = 0; panel < D / W; ++panel) {
    q_frag_.push_back(a_tile(k, 16, W, in, "q" + std::to_string(panel) + "_"));
    tile::warp::copy(k, panel_view(k, s, sQ_warp, panel, 0, true), q_frag_.back());
    acc_o_.push_back(c_tile(k, 16, W, "o" + std::to_string(panel) + "_"));
    for (const Reg& r : acc_o_.back().regs()) k.mov(r, imm_f32(0.0f));
  }
  for (int i = 0; i < KW / 16; ++i) p_frag_.push_back(a_tile(k, 16, 16, in, "p" + std::to_string(i) + "_"));
  acc_s_.emplace(c_tile(k, 16, KW, "s"));
  k_frag_.emplace(b_tile(k, W, KW, in, "kf"));
  v_frag_.emplace(b_tile(k, 16, W, in, "vf"));
  softmax_.emplace(k, p.scale_log2);
  // The thread's two rows' tokens (for the causal mask).
  lc_ = tile::emit_lane_coords(k, acc_s_->steps(), lane_);
  token_ = Regs(2);
  for (int half = 0; half < 2; ++half) {
    Reg row = row_tile_ * 16 + lc_.row + 8 * half;
    token_[half] = k.reg(u32);
    k.rem(token_[half], row, NQ);
  }
}

void Warps::block(const PanelTile& sK, const PanelTile& sV, const Reg& key0, const SplitKeys& keys) {
  Kernel& k = k_;
  const int D = s_.head_dim, BN = s_.block_n, KW = BN / s_.key_groups(), NQ = s_.q_tokens, W = s_.panel_width();
  tile::RegisterTile& acc_s = *acc_s_;
  for (int panel = 0; panel < D / W; ++panel) {
    tile::warp::copy(k, panel_view(k, s_, sK, panel, 0, false), *k_frag_);
    if (panel == 0) tile::warp::gemm(k, acc_s, q_frag_[panel], *k_frag_, std::nullopt, 1.0f, 0.0f);
    else tile::warp::gemm(k, acc_s, q_frag_[panel], *k_frag_, acc_s, 1.0f, 1.0f);
  }
  // The mask, in the blocks it cuts: keys past the split, right of a
  // token's diagonal (causal), left of its window.
  Pred cut = key0 + BN > keys.key_end;
  if (s_.causal) cut = cut || (key0 + (BN - 1) > keys.diag);
  if (s_.window_left) cut = cut || (key0 < keys.diag + (NQ - 1) - p_.window_left);
  k.if_then(cut, [&] {
    const auto s_half = row_halves(acc_s);
    const auto s_cols = value_cols(acc_s);
    Reg key = key0 + key_group_.as(s32) * KW + lc_.col.as(s32);
    Reg keys_left = keys.key_end - key;
    Regs right_room(2), left_room(2);
    for (int half = 0; half < 2; ++half) {
      Reg last = keys.diag + token_[half].as(s32);  // the row's last visible key
      right_room[half] = last - key;
      if (s_.window_left) left_room[half] = key - (last - p_.window_left);
    }
    for (std::size_t v = 0; v < s_half.size(); ++v) {
      const std::int64_t dc = s_cols[v];
      Pred seen = keys_left > dc;
      if (s_.causal) seen = seen && (right_room[s_half[v]] >= dc);
      if (s_.window_left) seen = seen && (left_room[s_half[v]] >= -dc);
      k.selp(acc_s.regs()[v], acc_s.regs()[v], minus_infinity, seen);
    }
  });
  softmax_->update(k, acc_s, acc_o_);
  pack_accumulator_as_a(k, acc_s, p_frag_);
  for (int kk = 0; kk < KW / 16; ++kk)
    for (int panel = 0; panel < D / W; ++panel) {
      tile::warp::copy(k, panel_view(k, s_, sV, panel, 16 * kk, true), *v_frag_);
      tile::warp::gemm(k, acc_o_[panel], p_frag_[kk], *v_frag_, acc_o_[panel], 1.0f, 1.0f);
    }
}

std::int64_t Warps::column_of(int panel, int v) const {
  return s_.panel_width() * static_cast<std::int64_t>(panel) +
         acc_o_[static_cast<std::size_t>(panel)].steps().value_offset(static_cast<std::int64_t>(v)).second;
}

int Warps::merge_bytes(const DecodeSpec& s) {
  // Per warp its O values (head_dim / 2 a lane) and two lse.
  return s.key_groups() > 1 ? 4 * (s.head_dim / 2 + 2) * 32 * 4 : 0;
}

// The output of rows that exist: O and lse, or the split's partials (to the
// workspace): of the columns of 8-column tiles share, share + shares, ...
// (the warps of a row tile write a share each), the lse with share 0.
void Warps::write_rows(int share, int shares) {
  Kernel& k = k_;
  const Type in = s_.dtype == DType::f16 ? f16 : bf16;
  const int D = s_.head_dim, NQ = s_.q_tokens, rows = s_.rows();
  const auto o_half = row_halves(acc_o_[0]);
  const tile::LaneCoords olc = tile::emit_lane_coords(k, acc_o_[0].steps(), lane_);
  // Each pair of adjacent columns of the thread's row `half` (the m16n8
  // accumulator's c0, c1: PTX ISA 9.7.14.5.14), with its column offset.
  auto row_pairs = [&](int half, const std::function<void(const Reg&, const Reg&, std::int64_t)>& body) {
    for (std::size_t panel = 0; panel < acc_o_.size(); ++panel)
      for (std::size_t v = 0; v + 1 < o_half.size(); v += 2) {
        const std::int64_t col = column_of(static_cast<int>(panel), static_cast<int>(v));
        if (o_half[v] == half && (col / 8) % shares == share)
          body(acc_o_[panel].regs()[v], acc_o_[panel].regs()[v + 1], col);
      }
  };
  for (int half = 0; half < 2; ++half) {
    Reg r = row_tile_ * 16 + olc.row + 8 * half;
    Reg head = g_ * s_.group + k.div(r, NQ);
    Reg t = k.reg(u32);
    k.rem(t, r, NQ);
    Pred inside = r < rows;
    Pred lse_writer = inside && ((lane_ & 3) == 0);
    const bool writes_lse = share == 0;
    if (!s_.split_output) {
      Reg out = element_address(k, p_.o, element_offset(k, b_, p_.so[0], head, p_.so[1], t, p_.so[2]), 2);
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
      if (s_.has_lse && writes_lse) {
        Reg natural = k.reg(f32);
        k.mul(natural, lse_[half], imm_f32(ln2));
        Reg where = element_address(k, p_.lse, element_offset(k, b_, p_.slse[0], head, p_.slse[1], t, p_.slse[2]), 4);
        k.guarded(lse_writer, [&] { k.st(Space::global, f32, at(where), natural); });
      }
    } else {
      // row·splits + split, row = (b·heads_q + head)·q_tokens + token.
      Reg global_row = (b_ * p_.heads_q + head) * NQ + t;
      Reg index = global_row * p_.splits + split_;
      Reg o_index = k.reg(u64);
      k.mul_wide(o_index, index, D);
      Reg out = element_address(k, p_.partial, o_index, 4);
      Reg col = k.reg(u64);
      k.mul_wide(col, olc.col, 4);
      out = out + col;
      k.guarded(inside, [&] {
        row_pairs(half, [&](const Reg& x0, const Reg& x1, std::int64_t col) {
          k.st(Space::global, f32, at(out, col * 4), Regs{x0, x1});
        });
      });
      if (!writes_lse) continue;
      Reg rows_total = k.sreg(SReg::nctaid_z) * p_.heads_q * NQ;
      Reg lse_index = k.reg(u64), lse_base = k.reg(u64);
      k.mul_wide(lse_base, rows_total * p_.splits, D * 4);
      k.mul_wide(lse_index, index, 4);
      Reg where = p_.partial + lse_base + lse_index;
      k.guarded(lse_writer, [&] { k.st(Space::global, f32, at(where), lse_[half]); });
    }
  }
}

// Each warp's result, normalised; the warps of a row tile merged by their
// log-sum-exps (log2 units) through shared memory, each warp summing and
// writing a share of the columns (8-column tiles key_group, key_group +
// key_groups, ...: the merge's loads and the rows' stores spread over the
// warps, not the first's alone).
void Warps::finish(const Reg& merge, const Reg& flag, const std::function<void()>& sync) {
  Kernel& k = k_;
  const int D = s_.head_dim, KG = s_.key_groups();
  OnlineSoftmax::Result result = softmax_->finish(k);
  const auto o_half = row_halves(acc_o_[0]);
  for (const auto& part : acc_o_)
    for (std::size_t v = 0; v < o_half.size(); ++v) k.mul(part.regs()[v], part.regs()[v], result.inverse[o_half[v]]);
  lse_ = result.lse_log2;
  if (KG > 1) {
    const int values = D / 2;  // a lane's O values (16 x D over 32 lanes)
    Reg lane_bytes = lane_ << 2;
    auto lse_slot = [&](const Reg& w, int half) { return merge + (w * 2 + half) * 128 + lane_bytes; };
    Reg o_area = merge + 4 * 2 * 128;
    auto o_slot = [&](const Reg& w, int v) { return o_area + (w * values + v) * 128 + lane_bytes; };
    for (int half = 0; half < 2; ++half) k.st(Space::shared, f32, at(lse_slot(warp_, half)), lse_[half]);
    sync();
    Reg first_warp = row_tile_ * KG;
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
      k.sub(x, lse_[half], offset);
      k.ex2_approx(x, x);
      k.div(weight[half], x, sum);
      k.selp(weight[half], imm_f32(0.0f), weight[half], k.setp(Cmp::eq, sum, imm_f32(0.0f)));
      Reg log_sum = k.reg(f32);
      k.lg2_approx(log_sum, sum);
      k.add(lse_[half], offset, log_sum);  // -inf where no warp saw a key
    }
    for (int panel = 0; panel < static_cast<int>(acc_o_.size()); ++panel) {
      const auto& part = acc_o_[panel];
      for (std::size_t v = 0; v < o_half.size(); ++v) {
        k.mul(part.regs()[v], part.regs()[v], weight[o_half[v]]);
        k.st(Space::shared, f32, at(o_slot(warp_, panel * static_cast<int>(o_half.size()) + static_cast<int>(v))),
             part.regs()[v]);
      }
    }
    sync();
    for (int share = 0; share < KG; ++share)
      k.if_then(key_group_ == share, [&] {
        Reg x = k.reg(f32);
        for (int w = 0; w < KG; ++w)
          for (int panel = 0; panel < static_cast<int>(acc_o_.size()); ++panel) {
            const auto& part = acc_o_[panel];
            for (std::size_t v = 0; v < o_half.size(); ++v) {
              if (w == share || (column_of(panel, static_cast<int>(v)) / 8) % KG != share) continue;
              k.ld(Space::shared, f32, x,
                   at(o_slot(first_warp + w, panel * static_cast<int>(o_half.size()) + static_cast<int>(v))));
              k.add(part.regs()[v], part.regs()[v], x);
            }
          }
        write_rows(share, KG);
      });
  } else {
    write_rows(0, 1);
  }
  if (!s_.split_output) return;
  const CombineArgs args{.partial = p_.partial, .o = p_.o, .lse = p_.lse, .so = p_.so, .slse = p_.slse,
                         .splits = p_.splits, .heads_q = p_.heads_q, .b = b_, .g = g_, .tid = tid_, .lane = lane_,
                         .warp = warp_, .flag = flag, .sync = sync};
  combine_if_last(k, s_, args);
}

}  // namespace warpforge::ops::decode
