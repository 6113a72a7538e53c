#include "sm80_backward_kernels.hpp"

#include <algorithm>
#include <array>
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

namespace {

constexpr float log2e = 1.4426950408889634f;
const Src plus_infinity = imm_f32(std::numeric_limits<float>::infinity());

// The parameters every backward kernel declares after its pointers.
struct Common {
  Reg seq_q, seq_k, group, rows_q, heads_q;
  std::vector<std::array<Reg, 3>> strides;  // (batch, head, row) of each strided view
  Reg scale, scale_log2, window_left, window_right;
};

Common declare_common(Kernel& k, std::initializer_list<const char*> strided) {
  Common c;
  c.seq_q = k.param(u32, "seq_q");
  c.seq_k = k.param(u32, "seq_k");
  c.group = k.param(u32, "group");
  c.rows_q = k.param(u32, "rows_q");
  c.heads_q = k.param(u32, "heads_q");
  for (const char* n : strided) {
    const std::string base(n);
    c.strides.push_back({k.param(u64, base + "_batch"), k.param(u64, base + "_head"), k.param(u64, base + "_row")});
  }
  c.scale = k.param(f32, "scale");
  c.scale_log2 = k.param(f32, "scale_log2");
  c.window_left = k.param(s32, "window_left");
  c.window_right = k.param(s32, "window_right");
  return c;
}

// The u64 address of row `row` (u32, within the sequence) of a strided view
// for (b, h), the sequence starting at row `first`.
Reg row_address(Kernel& k, const Reg& base, const std::array<Reg, 3>& st, const Reg& b, const Reg& h,
                const Reg& row, int bytes) {
  return element_address(k, base, element_offset(k, b, st[0], h, st[1], row, st[2]), bytes);
}

// The workspace row of query i of sequence b: b·seq_q + i, or cu[b] + i.
Reg workspace_row(Kernel& k, bool varlen, const Extent& qs, const Reg& b, const Reg& seq_q) {
  Reg first = varlen ? qs.first.as(u32) : b * seq_q;
  return k.mov(u32, first);
}

// Where a thread of the row kernels works: 64 rows of (sequence b, head h)
// a CTA (ctaid x, y, z: the block, the head, the sequence), head_dim/8
// lanes a row (16-byte pieces), 128/(head_dim/8) rows a pass; CTAs past the
// sequence exit.
struct RowBlock {
  int lanes, rows_per_pass, passes;
  Reg h, b;
  Extent qs;
  Reg m0, piece, row_in_pass, ws_row0;

  RowBlock(Kernel& k, const Sm80BackwardSpec& s, const Common& c, const Reg& cu_q)
      : lanes(s.head_dim / 8), rows_per_pass(128 / lanes), passes(64 / rows_per_pass) {
    Reg tid = k.sreg(SReg::tid_x);
    h = k.sreg(SReg::ctaid_y), b = k.sreg(SReg::ctaid_z);
    qs = sequence_extent(k, s.varlen, cu_q, b, c.seq_q);
    m0 = (k.sreg(SReg::ctaid_x) * 64).as(s32);
    k.if_then(m0 >= qs.length, [&] { k.exit(); });
    piece = k.reg(u32), row_in_pass = k.reg(u32);
    k.rem(piece, tid, lanes);
    k.div(row_in_pass, tid, lanes);
    ws_row0 = workspace_row(k, s.varlen, qs, b, c.seq_q);
  }
  // The row (within the sequence) of this thread's pass `pass`.
  Reg row(int pass) const { return m0.as(u32) + (pass * rows_per_pass) + row_in_pass; }
};

// Eight 16-bit values (four b32) as f32.
Regs unpack8(Kernel& k, DType t, const Regs& packed) {
  Regs out;
  for (const Reg& x : packed) {
    if (t == DType::bf16) {
      // bf16 -> f32 is exact as a 16-bit shift (bf16 is the upper half of a binary32).
      Reg lo = x << 16, hi = x & 0xffff0000u;
      out.push_back(lo.as(f32));
      out.push_back(hi.as(f32));
    } else {
      Reg lo = k.reg(b16), hi = k.reg(b16);
      k.unpack({lo, hi}, x);
      Reg a = k.reg(f32), b = k.reg(f32);
      k.cvt(f32, f16, a, lo);
      k.cvt(f32, f16, b, hi);
      out.push_back(a);
      out.push_back(b);
    }
  }
  return out;
}

std::vector<tile::RegisterTile> zero_parts(Kernel& k, int count, const std::string& name) {
  std::vector<tile::RegisterTile> parts;
  for (int i = 0; i < count; ++i) {
    parts.push_back(c_tile(k, 16, 16, name + std::to_string(i) + "_"));
    for (const Reg& r : parts.back().regs()) k.mov(r, imm_f32(0.0f));
  }
  return parts;
}

}  // namespace

int Sm80BackwardSpec::kv_shared_bytes() const {
  // K, V (block_n rows), dSᵀ (block_n x block_m), and q_stages of Q, dO
  // (block_m rows), lse and D.
  return 2 * block_n * head_dim * 2 + block_n * block_m * 2 + q_stages * q_stage_bytes();
}

int Sm80BackwardSpec::q_stage_bytes() const { return 2 * block_m * head_dim * 2 + 2 * block_m * 4; }

int Sm80BackwardSpec::dq_shared_bytes() const { return (2 * 64 + 2 * block_n) * head_dim * 2; }

std::string Sm80BackwardSpec::name(const char* kernel) const {
  return "warpforge_attention_bwd_sm80_" + std::string(kernel) + "_" + std::string(runtime::name(dtype)) + "_d" +
         std::to_string(head_dim) + "_" + std::to_string(block_m) + "x" + std::to_string(block_n) +
         (varlen ? "_varlen" : "") + (window_left ? "_wl" : "") + (window_right ? "_wr" : "") +
         (top_left ? "_tl" : "") + (deterministic ? "_det" : "") + "_q" + std::to_string(q_stages);
}

Sm80BackwardSpec sm80_backward_spec(const AttentionProblem& p) {
  Sm80BackwardSpec s;
  s.dtype = p.dtype;
  s.head_dim = static_cast<int>(p.head_dim);
  // 32 queries a block from head_dim 128: dK and dV alone hold head_dim
  // registers a thread, Sᵀ and dPᵀ 2·block_m/2.
  s.block_m = p.head_dim >= 128 ? 32 : 64;
  s.block_n = 64;
  // Two buffers where two CTAs an SM still fit (68 KB at head_dim 128); at
  // 256 a second would take 132 KB, one CTA an SM.
  s.q_stages = p.head_dim <= 128 ? 2 : 1;
  take_mask_flags(s, p);
  s.deterministic = p.deterministic;
  return s;
}

std::size_t backward_rows_q(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.varlen ? p.total_q : p.batch * p.seq_q);
}
std::size_t dq_accum_offset(const AttentionProblem& p) {
  return (static_cast<std::size_t>(p.heads_q) * backward_rows_q(p) * 4 + 15) / 16 * 16;
}
std::size_t backward_workspace_bytes(const AttentionProblem& p) {
  const std::size_t dq = p.deterministic ? 0 : backward_rows_q(p) * static_cast<std::size_t>(p.heads_q * p.head_dim) * 4;
  return dq_accum_offset(p) + dq;
}

// ---- rows: D = rowsum(dO ∘ O), dq_accum = 0 ---------------------------------------

ptx::Module build_sm80_backward_rows(const Sm80BackwardSpec& s) {
  Kernel k(s.name("rows"), Target::sm_80);
  Reg po = k.param_ptr("O"), pdo = k.param_ptr("dO"), cu_q = k.param_ptr("cu_seqlens_q"),
      delta = k.param_ptr("delta"), dq_accum = k.param_ptr("dq_accum");
  const Common c = declare_common(k, {"o", "do"});
  k.reqntid(128);
  const RowBlock rb(k, s, c, cu_q);
  const Reg &h = rb.h, &b = rb.b, &piece = rb.piece;
  for (int pass = 0; pass < rb.passes; ++pass) {
    Reg i = rb.row(pass);  // the row within the sequence
    Pred inside = i.as(s32) < rb.qs.length;
    Reg seq_row = rb.qs.first.as(u32) + i;
    Regs o = k.regs(b32, 4), d_o = k.regs(b32, 4);
    Reg piece_bytes = k.reg(u64);
    k.mul_wide(piece_bytes, piece, 16);
    Reg sum = k.reg(f32);
    k.mov(sum, imm_f32(0.0f));
    k.guarded(inside, [&] {
      k.ld(Space::global, b32, o, at(row_address(k, po, c.strides[0], b, h, seq_row, 2) + piece_bytes));
      k.ld(Space::global, b32, d_o, at(row_address(k, pdo, c.strides[1], b, h, seq_row, 2) + piece_bytes));
    });
    const Regs of = unpack8(k, s.dtype, o), df = unpack8(k, s.dtype, d_o);
    k.guarded(inside, [&] {
      for (int e = 0; e < 8; ++e) k.fma(sum, of[e], df[e], sum);
    });
    Reg other = k.reg(f32);
    for (int lanes = rb.lanes / 2; lanes >= 1; lanes /= 2) {  // the row's lanes are adjacent
      k.shfl_sync(Shfl::bfly, other, sum, lanes, 0x1f);
      k.add(sum, sum, other);
    }
    Reg ws_row = rb.ws_row0 + i;
    Reg at_delta = k.reg(u64);
    k.mul_wide(at_delta, h * c.rows_q + ws_row, 4);
    k.guarded(inside && (piece == 0), [&] { k.st(Space::global, f32, at(delta + at_delta), sum); });
    if (!s.deterministic) {
      Reg at_dq = k.reg(u64);
      k.mul_wide(at_dq, (ws_row * c.heads_q + h) * s.head_dim + piece * 8, 4);
      Reg zero = k.mov(f32, imm_f32(0.0f));
      k.guarded(inside, [&] {
        k.st(Space::global, f32, at(dq_accum + at_dq), Regs{zero, zero, zero, zero});
        k.st(Space::global, f32, at(dq_accum + at_dq, 16), Regs{zero, zero, zero, zero});
      });
    }
  }
  return k.module();
}

// ---- finish: dQ = scale·dq_accum ------------------------------------------------------

ptx::Module build_sm80_backward_finish(const Sm80BackwardSpec& s) {
  Kernel k(s.name("finish"), Target::sm_80);
  Reg dq_accum = k.param_ptr("dq_accum"), pdq = k.param_ptr("dQ"), cu_q = k.param_ptr("cu_seqlens_q");
  const Common c = declare_common(k, {"dq"});
  k.reqntid(128);
  const RowBlock rb(k, s, c, cu_q);
  const Reg &h = rb.h, &b = rb.b, &piece = rb.piece;
  const Type packed = s.dtype == DType::f16 ? f16x2 : bf16x2;
  for (int pass = 0; pass < rb.passes; ++pass) {
    Reg i = rb.row(pass);
    k.if_then(i.as(s32) < rb.qs.length, [&] {
      Reg at_dq = k.reg(u64);
      k.mul_wide(at_dq, ((rb.ws_row0 + i) * c.heads_q + h) * s.head_dim + piece * 8, 4);
      Regs x = k.regs(f32, 8);
      k.ld(Space::global, f32, Regs(x.begin(), x.begin() + 4), at(dq_accum + at_dq));
      k.ld(Space::global, f32, Regs(x.begin() + 4, x.end()), at(dq_accum + at_dq, 16));
      Regs out = k.regs(b32, 4);
      for (int e = 0; e < 8; ++e) k.mul(x[e], x[e], c.scale);
      for (int e = 0; e < 4; ++e) k.cvt_pack(packed, out[e], x[2 * e + 1], x[2 * e]);
      Reg piece_bytes = k.reg(u64);
      k.mul_wide(piece_bytes, piece, 16);
      k.st(Space::global, b32,
           at(row_address(k, pdq, c.strides[0], b, h, rb.qs.first.as(u32) + i, 2) + piece_bytes), out);
    });
  }
  return k.module();
}

// ---- kv: dK, dV (and dq_accum) for a block of keys ----------------------------------

ptx::Module build_sm80_backward_kv(const Sm80BackwardSpec& s) {
  Kernel k(s.name("kv"), Target::sm_80);
  const Type in = s.dtype == DType::f16 ? f16 : bf16;
  const int D = s.head_dim, BM = s.block_m, BN = s.block_n;
  Reg pq = k.param_ptr("Q"), pk = k.param_ptr("K"), pv = k.param_ptr("V"), pdo = k.param_ptr("dO"),
      plse = k.param_ptr("lse"), pdk = k.param_ptr("dK"), pdv = k.param_ptr("dV"),
      cu_q = k.param_ptr("cu_seqlens_q"), cu_k = k.param_ptr("cu_seqlens_k"), delta = k.param_ptr("delta"),
      dq_accum = k.param_ptr("dq_accum");
  const Common c = declare_common(k, {"q", "k", "v", "do", "lse", "dk", "dv"});
  const auto &sq = c.strides[0], &sk = c.strides[1], &sv = c.strides[2], &sdo = c.strides[3],
             &slse = c.strides[4], &sdk = c.strides[5], &sdv = c.strides[6];
  k.reqntid(128);
  Shared smem = k.dynamic_shared("smem", 128);

  Reg tid = k.sreg(SReg::tid_x), lane = k.sreg(SReg::laneid);
  Reg warp = tid >> 5;
  Reg n_block = k.sreg(SReg::ctaid_x), kv_head = k.sreg(SReg::ctaid_y), b = k.sreg(SReg::ctaid_z);
  const Extent qs = sequence_extent(k, s.varlen, cu_q, b, c.seq_q), ks = sequence_extent(k, s.varlen, cu_k, b, c.seq_k);
  Reg n0 = (n_block * BN).as(s32);
  k.if_then(n0 >= ks.length, [&] { k.exit(); });
  Reg diag = mask_diagonal(k, s.top_left, qs.length, ks.length);
  // The query blocks that see a key of this block.
  const QueryBlockRange seen = query_blocks(k,
                                        {.diag = diag, .left = s.window_left, .right = s.window_right,
                                         .window_left = c.window_left, .window_right = c.window_right},
                                        qs.length, n0, BN, BM);
  const Reg& block_lo = seen.lo;
  Reg blocks = seen.hi - seen.lo;

  Reg smem_base = k.address_of(smem);
  const PanelTile sK{smem_base, BN, D}, sV{smem_base + BN * D * 2, BN, D}, sdS{smem_base + 2 * BN * D * 2, BN, BM};
  // Buffer `buf` of Q, dO (panel tiles), lse and D (BM floats each).
  Reg q_stages_base = smem_base + (2 * BN * D * 2 + BN * BM * 2);
  struct QStage {
    PanelTile q, d_o;
    Reg lse, delta;
  };
  auto q_stage = [&](const Reg& buf) {
    Reg at = q_stages_base + buf * s.q_stage_bytes();
    return QStage{PanelTile{at, BM, D}, PanelTile{at + BM * D * 2, BM, D}, at + 2 * BM * D * 2,
                  at + (2 * BM * D * 2 + BM * 4)};
  };
  // The warp's 16 keys of K and V.
  const PanelTile sK_warp{sK.base + warp * (16 * 32), BN, D}, sV_warp{sV.base + warp * (16 * 32), BN, D};

  Reg key_row0 = ks.first.as(u32) + n0.as(u32);
  Reg k_row_bytes = k.reg(u64), v_row_bytes = k.reg(u64), q_row_bytes = k.reg(u64), do_row_bytes = k.reg(u64);
  k.shl(k_row_bytes, sk[2], 1);
  k.shl(v_row_bytes, sv[2], 1);
  k.shl(q_row_bytes, sq[2], 1);
  k.shl(do_row_bytes, sdo[2], 1);
  Reg keys_valid = ks.length - n0;
  stage_rows(k, sK, row_address(k, pk, sk, b, kv_head, key_row0, 2), k_row_bytes, keys_valid, tid, 128);
  stage_rows(k, sV, row_address(k, pv, sv, b, kv_head, key_row0, 2), v_row_bytes, keys_valid, tid, 128);
  k.cp_async_commit();

  auto acc_dk = zero_parts(k, D / 16, "dk"), acc_dv = zero_parts(k, D / 16, "dv");
  auto acc_s = c_tile(k, 16, BM, "st"), acc_dp = c_tile(k, 16, BM, "dpt");
  std::vector<tile::RegisterTile> p_t, ds_t;
  for (int i = 0; i < BM / 16; ++i) {
    p_t.push_back(a_tile(k, 16, 16, in, "pt" + std::to_string(i) + "_"));
    ds_t.push_back(a_tile(k, 16, 16, in, "dst" + std::to_string(i) + "_"));
  }
  auto a_frag = a_tile(k, 16, 16, in, "af"), b_cols = b_tile(k, 16, BM, in, "bc"),
       b_rows = b_tile(k, 16, 16, in, "br");
  const tile::LaneCoords lc = tile::emit_lane_coords(k, acc_s.steps(), lane);
  Reg key_of_lane = n0 + (warp * 16 + lc.row).as(s32);  // rows of Sᵀ are keys
  const MaskGeometry mask{.keys_are_rows = true,
                          .query0 = lc.col.as(s32),  // plus the block's first query, below
                          .key0 = key_of_lane,
                          .len_k = ks.length,
                          .diag = diag,
                          .left = s.window_left,
                          .right = s.window_right,
                          .window_left = c.window_left,
                          .window_right = c.window_right};
  // Each column (query) of Sᵀ that the thread holds: its offset from lc.col.
  std::vector<std::int64_t> columns;
  for (std::int64_t v = 0; v < acc_s.steps().values(); ++v) {
    const auto col = acc_s.steps().value_offset(v).second;
    if (std::find(columns.begin(), columns.end(), col) == columns.end()) columns.push_back(col);
  }

  // fast mode's dQ: warp w sums rows (w mod RT)·16.. of dS·K over panels
  // w / RT, w / RT + PS, ... (RT row tiles of 16, PS = 4 / RT panels apart).
  const int RT = BM / 16, PS = 4 / RT;
  Reg dq_tile = warp & (RT - 1), dq_panel0 = k.div(warp, RT);
  Reg ws_row0 = workspace_row(k, s.varlen, qs, b, c.seq_q);

  // The query blocks of every head of the group, in one walk: step t is
  // head kv_head·group + t / blocks, query block block_lo + t % blocks.
  struct Step {
    Reg h, m0, rows_valid;
  };
  auto step_of = [&](const Reg& t) {
    Reg hh = k.div(t, blocks), it = k.reg(s32);
    k.rem(it, t, blocks);
    Reg m0 = (block_lo + it) * BM;
    return Step{kv_head * c.group + hh.as(u32), m0, qs.length - m0};
  };
  // Step t's Q and dO into its buffer by cp.async (committed), and its lse
  // and D loaded into registers of threads tid < BM (next_lse, next_delta),
  // which publish_lse_delta stores to the buffer once every warp is done
  // with it: lse in log2 units, +inf where the row sees no key or is
  // padding (P = 0).
  Reg next_lse = k.reg(f32), next_delta = k.reg(f32);
  auto load_step = [&](const Step& st, const QStage& buf) {
    Reg m0_64 = k.reg(u64);
    k.cvt(u64, s32, m0_64, st.m0);
    Reg q_base = row_address(k, pq, sq, b, st.h, qs.first.as(u32), 2);
    Reg do_base = row_address(k, pdo, sdo, b, st.h, qs.first.as(u32), 2);
    stage_rows(k, buf.q, q_base + m0_64 * q_row_bytes, q_row_bytes, st.rows_valid, tid, 128);
    stage_rows(k, buf.d_o, do_base + m0_64 * do_row_bytes, do_row_bytes, st.rows_valid, tid, 128);
    k.cp_async_commit();
    k.if_then(tid < BM, [&] {
      k.mov(next_lse, plus_infinity);
      k.mov(next_delta, imm_f32(0.0f));
      k.if_then(tid.as(s32) < st.rows_valid, [&] {
        Reg lse_base = row_address(k, plse, slse, b, st.h, qs.first.as(u32), 4);
        Reg i64 = k.reg(u64);
        k.cvt(u64, s32, i64, st.m0 + tid.as(s32));
        Reg at_lse = k.reg(u64);
        k.mul(at_lse, i64, slse[2]);
        k.ld(Space::global, f32, next_lse, at(element_address(k, lse_base, at_lse, 4)));
        Reg at_d = k.reg(u64);
        k.mul_wide(at_d, st.h * c.rows_q + ws_row0 + st.m0.as(u32) + tid, 4);
        k.ld(Space::global, f32, next_delta, at(delta + at_d));
      });
    });
  };
  auto publish_lse_delta = [&](const QStage& buf) {
    k.if_then(tid < BM, [&] {
      Reg x = k.reg(f32);
      k.mul(x, next_lse, imm_f32(log2e));
      k.selp(x, plus_infinity, x, k.setp(Cmp::eq, x, imm_f32(-std::numeric_limits<float>::infinity())));
      Reg slot = tid << 2;
      k.st(Space::shared, f32, at(buf.lse + slot), x);
      k.st(Space::shared, f32, at(buf.delta + slot), next_delta);
    });
  };

  Reg steps = blocks * c.group.as(s32);
  if (s.q_stages == 2) k.if_then(steps > 0, [&] { load_step(step_of(k.mov(s32, 0)), q_stage(k.mov(u32, 0))); });
  k.for_range(0, steps, 1, [&](Reg t) {
    const Step st = step_of(t);
    const Reg &h = st.h, &m0 = st.m0, &rows_valid = st.rows_valid;
    Reg buf = s.q_stages == 2 ? (t & 1).as(u32) : k.mov(u32, 0);
    const QStage cur = q_stage(buf);
    const PanelTile &sQ = cur.q, &sdO = cur.d_o;
    const Reg &s_lse = cur.lse, &s_delta = cur.delta;
    if (s.q_stages == 2) {
      // Step t's copies (issued during step t - 1) have landed; its lse and
      // D go to its buffer, which every warp left at the last barrier.
      k.cp_async_wait_all();
      publish_lse_delta(cur);
      k.bar_sync(0);  // ... and every warp is done with step t - 1's buffer and dSᵀ
      k.if_then(t + 1 < steps, [&] { load_step(step_of(t + 1), q_stage(buf ^ 1)); });
    } else {
      k.bar_sync(0);  // every warp is done with the last block's Q, dO, dSᵀ, lse, D
      load_step(st, cur);
      k.cp_async_wait_all();
      publish_lse_delta(cur);
      k.bar_sync(0);
    }

    // Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ for the warp's 16 keys.
    panel_products(k, acc_s, sK_warp, sQ, a_frag, b_cols);
    panel_products(k, acc_dp, sV_warp, sdO, a_frag, b_cols);
    k.if_then(mask_cuts(mask, m0, BM, n0, BN), [&] {
      MaskGeometry at_block = mask;
      at_block.query0 = mask.query0 + m0;
      apply_mask(k, acc_s, at_block);
    });
    // Pᵀ = exp2(Sᵀ·c - lse·log2(e)); dSᵀ = Pᵀ ∘ (dPᵀ - D), by column.
    Reg col_bytes = lc.col << 2;
    for (std::int64_t col : columns) {
      Reg l = k.reg(f32), d = k.reg(f32), nl = k.reg(f32);
      k.ld(Space::shared, f32, l, at(s_lse + col_bytes, col * 4));
      k.ld(Space::shared, f32, d, at(s_delta + col_bytes, col * 4));
      k.neg(nl, l);
      for (std::int64_t v = 0; v < acc_s.steps().values(); ++v) {
        if (acc_s.steps().value_offset(v).second != col) continue;
        const Reg& x = acc_s.regs()[static_cast<std::size_t>(v)];
        const Reg& dp = acc_dp.regs()[static_cast<std::size_t>(v)];
        k.fma(x, x, c.scale_log2, nl);
        k.ex2_approx(x, x);
        k.sub(dp, dp, d);
        k.mul(dp, dp, x);
      }
    }
    // dV += Pᵀ·dO and dK += dSᵀ·Q (the scale applied at the end).
    pack_accumulator_as_a(k, acc_s, p_t);
    pack_accumulator_as_a(k, acc_dp, ds_t);
    for (int kk = 0; kk < BM / 16; ++kk)
      for (int panel = 0; panel < D / 16; ++panel) {
        tile::warp::copy(k, sdO.panel_view(k, panel, 16 * kk, true), b_rows);
        tile::warp::gemm(k, acc_dv[panel], p_t[kk], b_rows, acc_dv[panel], 1.0f, 1.0f);
        tile::warp::copy(k, sQ.panel_view(k, panel, 16 * kk, true), b_rows);
        tile::warp::gemm(k, acc_dk[panel], ds_t[kk], b_rows, acc_dk[panel], 1.0f, 1.0f);
      }
    if (s.deterministic) return;

    // Fast mode: dSᵀ to shared memory (keys x queries, the panel layout),
    // then dQ += dS·K added into dq_accum.
    {
      const tile::LaneCoords alc = tile::emit_lane_coords(k, ds_t[0].steps(), lane);
      Reg key_row = warp * 16 + alc.row;
      const layout::Swizzle swz = panel_swizzle();
      const std::int64_t swz_mask = ((std::int64_t{1} << swz.bits()) - 1) << swz.base();
      for (int kk = 0; kk < BM / 16; ++kk)
        for (std::size_t r = 0; r < ds_t[kk].regs().size(); ++r) {
          const auto [dr, dc] = ds_t[kk].steps().value_offset(static_cast<std::int64_t>(2 * r));
          // Element (key_row + dr, query 16·kk + alc.col + dc): panel kk, in-panel column alc.col + dc.
          Reg element = ((key_row + dr) << 4) + (alc.col + dc);
          Reg swizzled = element ^ ((element >> swz.shift()) & swz_mask);
          k.st(Space::shared, b32, at(sdS.base + (swizzled << 1), kk * BN * 32), ds_t[kk].regs()[r]);
        }
    }
    k.bar_sync(0);
    auto acc_dq = zero_parts(k, D / 16 / PS, "dq");
    const PanelTile sdS_tile{sdS.base + dq_tile * (BN * 32), BN, BM};  // queries 16·dq_tile ..
    const PanelTile sK_panels{sK.base + dq_panel0 * (BN * 32), BN, D};
    for (int kk = 0; kk < BN / 16; ++kk) {
      tile::warp::copy(k, sdS_tile.panel_view(k, 0, 16 * kk, false), a_frag);  // dS = (dSᵀ)ᵀ
      for (int m = 0; m < D / 16 / PS; ++m) {
        tile::warp::copy(k, sK_panels.panel_view(k, PS * m, 16 * kk, true), b_rows);
        tile::warp::gemm(k, acc_dq[m], a_frag, b_rows, acc_dq[m], 1.0f, 1.0f);
      }
    }
    const tile::LaneCoords qlc = tile::emit_lane_coords(k, acc_dq[0].steps(), lane);
    const auto half_of = row_halves(acc_dq[0]);
    for (int half = 0; half < 2; ++half) {
      Reg q_row = dq_tile * 16 + qlc.row + 8 * half;  // within the block
      Reg at_dq = k.reg(u64);
      k.mul_wide(at_dq, ((ws_row0 + m0.as(u32) + q_row) * c.heads_q + h) * D + dq_panel0 * 16 + qlc.col, 4);
      Reg base = dq_accum + at_dq;
      k.guarded(q_row.as(s32) < rows_valid, [&] {
        for (int m = 0; m < D / 16 / PS; ++m)
          for (std::int64_t v = 0; v < acc_dq[m].steps().values(); ++v) {
            if (half_of[static_cast<std::size_t>(v)] != half) continue;
            const auto col = acc_dq[m].steps().value_offset(v).second;
            k.red(Space::global, AtomOp::add, f32, at(base, (16 * PS * m + col) * 4),
                  acc_dq[m].regs()[static_cast<std::size_t>(v)]);
          }
      });
    }
  });

  // dK·scale and dV for the warp's keys that exist.
  Reg warp_key = key_row0 + warp * 16;
  Reg keys_left = keys_valid - (warp * 16).as(s32);
  Reg dk_row_bytes = k.reg(u64), dv_row_bytes = k.reg(u64);
  k.shl(dk_row_bytes, sdk[2], 1);
  k.shl(dv_row_bytes, sdv[2], 1);
  store_rows(k, acc_dk, row_address(k, pdk, sdk, b, kv_head, warp_key, 2), dk_row_bytes, keys_left, in, c.scale, lane);
  store_rows(k, acc_dv, row_address(k, pdv, sdv, b, kv_head, warp_key, 2), dv_row_bytes, keys_left, in, std::nullopt,
             lane);
  return k.module();
}

// ---- dq (deterministic): dQ of a block of queries, key blocks in order ----------------

ptx::Module build_sm80_backward_dq(const Sm80BackwardSpec& s) {
  Kernel k(s.name("dq"), Target::sm_80);
  const Type in = s.dtype == DType::f16 ? f16 : bf16;
  const int D = s.head_dim, BM = 64, BN = s.block_n;
  Reg pq = k.param_ptr("Q"), pk = k.param_ptr("K"), pv = k.param_ptr("V"), pdo = k.param_ptr("dO"),
      plse = k.param_ptr("lse"), pdq = k.param_ptr("dQ"), cu_q = k.param_ptr("cu_seqlens_q"),
      cu_k = k.param_ptr("cu_seqlens_k"), delta = k.param_ptr("delta");
  const Common c = declare_common(k, {"q", "k", "v", "do", "lse", "dq"});
  const auto &sq = c.strides[0], &sk = c.strides[1], &sv = c.strides[2], &sdo = c.strides[3],
             &slse = c.strides[4], &sdq = c.strides[5];
  k.reqntid(128);
  Shared smem = k.dynamic_shared("smem", 128);

  Reg tid = k.sreg(SReg::tid_x), lane = k.sreg(SReg::laneid);
  Reg warp = tid >> 5;
  Reg q_block = k.sreg(SReg::ctaid_x), h = k.sreg(SReg::ctaid_y), b = k.sreg(SReg::ctaid_z);
  Reg kv_head = k.div(h, c.group);
  const Extent qs = sequence_extent(k, s.varlen, cu_q, b, c.seq_q), ks = sequence_extent(k, s.varlen, cu_k, b, c.seq_k);
  Reg m0 = (q_block * BM).as(s32);
  k.if_then(m0 >= qs.length, [&] { k.exit(); });
  Reg rows_valid = qs.length - m0;
  // The mask (query0 and key0 are the thread's, set below) and the key blocks a row of this block sees.
  MaskGeometry mask{.len_k = ks.length,
                    .diag = mask_diagonal(k, s.top_left, qs.length, ks.length),
                    .left = s.window_left,
                    .right = s.window_right,
                    .window_left = c.window_left,
                    .window_right = c.window_right};
  const KeyBlocks kb = key_blocks(k, mask, m0, k.min(rows_valid, BM), BN);
  const Reg& block_lo = kb.lo;
  const Reg& block_hi = kb.hi;

  Reg smem_base = k.address_of(smem);
  const PanelTile sQ{smem_base, BM, D}, sdO{smem_base + BM * D * 2, BM, D}, sK{smem_base + 2 * BM * D * 2, BN, D},
      sV{smem_base + (2 * BM + BN) * D * 2, BN, D};
  const PanelTile sQ_warp{sQ.base + warp * (16 * 32), BM, D}, sdO_warp{sdO.base + warp * (16 * 32), BM, D};
  Reg q_row0 = qs.first.as(u32) + m0.as(u32), key_row0 = ks.first.as(u32);
  Reg q_row_bytes = k.reg(u64), do_row_bytes = k.reg(u64), k_row_bytes = k.reg(u64), v_row_bytes = k.reg(u64),
      dq_row_bytes = k.reg(u64);
  k.shl(q_row_bytes, sq[2], 1);
  k.shl(do_row_bytes, sdo[2], 1);
  k.shl(k_row_bytes, sk[2], 1);
  k.shl(v_row_bytes, sv[2], 1);
  k.shl(dq_row_bytes, sdq[2], 1);
  stage_rows(k, sQ, row_address(k, pq, sq, b, h, q_row0, 2), q_row_bytes, rows_valid, tid, 128);
  stage_rows(k, sdO, row_address(k, pdo, sdo, b, h, q_row0, 2), do_row_bytes, rows_valid, tid, 128);
  k.cp_async_commit();
  Reg k_base = row_address(k, pk, sk, b, kv_head, key_row0, 2), v_base = row_address(k, pv, sv, b, kv_head, key_row0, 2);

  auto acc_dq = zero_parts(k, D / 16, "dq");
  auto acc_s = c_tile(k, 16, BN, "s"), acc_dp = c_tile(k, 16, BN, "dp");
  std::vector<tile::RegisterTile> ds;
  for (int i = 0; i < BN / 16; ++i) ds.push_back(a_tile(k, 16, 16, in, "ds" + std::to_string(i) + "_"));
  auto a_frag = a_tile(k, 16, 16, in, "af"), b_cols = b_tile(k, 16, BN, in, "bc"), b_rows = b_tile(k, 16, 16, in, "br");
  const tile::LaneCoords lc = tile::emit_lane_coords(k, acc_s.steps(), lane);
  Reg lane_row = warp * 16 + lc.row;
  // The thread's two rows: -lse·log2(e) (-inf where the row sees no key or
  // is padding, so that P = 0) and D.
  Regs neg_lse(2), d(2);
  Reg ws_row0 = workspace_row(k, s.varlen, qs, b, c.seq_q);
  for (int half = 0; half < 2; ++half) {
    Reg row = lane_row + 8 * half;
    neg_lse[half] = k.mov(f32, imm_f32(-std::numeric_limits<float>::infinity()));
    d[half] = k.mov(f32, imm_f32(0.0f));
    k.if_then(row.as(s32) < rows_valid, [&] {
      Reg l = k.reg(f32);
      k.ld(Space::global, f32, l, at(row_address(k, plse, slse, b, h, q_row0 + row, 4)));
      k.mul(neg_lse[half], l, imm_f32(-log2e));
      k.selp(neg_lse[half], l, neg_lse[half], k.setp(Cmp::eq, l, imm_f32(-std::numeric_limits<float>::infinity())));
      Reg at_d = k.reg(u64);
      k.mul_wide(at_d, h * c.rows_q + ws_row0 + m0.as(u32) + row, 4);
      k.ld(Space::global, f32, d[half], at(delta + at_d));
    });
  }
  mask.query0 = m0 + lane_row.as(s32);
  mask.key0 = lc.col.as(s32);
  const auto s_half = row_halves(acc_s);

  k.for_range(block_lo, block_hi, 1, [&](Reg block) {
    Reg key0 = block * BN;
    Reg key0_64 = k.reg(u64);
    k.cvt(u64, s32, key0_64, key0);
    k.bar_sync(0);  // every warp is done with the last block's K and V
    stage_rows(k, sK, k_base + key0_64 * k_row_bytes, k_row_bytes, ks.length - key0, tid, 128);
    stage_rows(k, sV, v_base + key0_64 * v_row_bytes, v_row_bytes, ks.length - key0, tid, 128);
    k.cp_async_commit();
    k.cp_async_wait_all();
    k.bar_sync(0);
    panel_products(k, acc_s, sQ_warp, sK, a_frag, b_cols);  // S = Q·Kᵀ
    panel_products(k, acc_dp, sdO_warp, sV, a_frag, b_cols);  // dP = dO·Vᵀ
    k.if_then(mask_cuts(mask, m0, BM, key0, BN), [&] {
      MaskGeometry at_block = mask;
      at_block.key0 = mask.key0 + key0;
      apply_mask(k, acc_s, at_block);
    });
    // P = exp2(S·c - lse·log2(e)), dS = P ∘ (dP - D).
    for (std::size_t v = 0; v < s_half.size(); ++v) {
      const Reg& x = acc_s.regs()[v];
      const Reg& dp = acc_dp.regs()[v];
      k.fma(x, x, c.scale_log2, neg_lse[s_half[v]]);
      k.ex2_approx(x, x);
      k.sub(dp, dp, d[s_half[v]]);
      k.mul(dp, dp, x);
    }
    pack_accumulator_as_a(k, acc_dp, ds);
    for (int kk = 0; kk < BN / 16; ++kk)
      for (int panel = 0; panel < D / 16; ++panel) {
        tile::warp::copy(k, sK.panel_view(k, panel, 16 * kk, true), b_rows);
        tile::warp::gemm(k, acc_dq[panel], ds[kk], b_rows, acc_dq[panel], 1.0f, 1.0f);
      }
  });
  store_rows(k, acc_dq, row_address(k, pdq, sdq, b, h, q_row0 + warp * 16, 2), dq_row_bytes,
             rows_valid - (warp * 16).as(s32), in, c.scale, lane);
  return k.module();
}

}  // namespace warpforge::ops
