#include "sm90a_backward_kernel.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "sm80_mask.hpp"
#include "sm80_tiles.hpp"
#include "sm90a_design.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/swizzle.hpp"
#include "warpforge/tile/mbarrier_array.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {

using namespace dsl;
using namespace attention_sm80;  // fragments and mask: a warp's 16 rows of a wgmma accumulator are laid out alike
using runtime::DType;

namespace {

constexpr int kWgM = 64;                   // a warpgroup's wgmma rows (M)
constexpr std::uint32_t kRow = 128;        // bytes of a panel row: 64 elements, the 128-byte swizzle's span
constexpr std::uint32_t kAtom = 8 * kRow;  // 8 rows: the swizzle's repeat (a wgmma core matrix group)
constexpr float kLog2e = 1.4426950408889634f;
// A 64-column panel of the CTA's keys (K, V, dSᵀ): block_n rows of 128 bytes.
std::uint32_t panel_bytes(const Sm90aBackwardSpec& s) { return static_cast<std::uint32_t>(s.block_n) * kRow; }
// lse and D of one query block, staged by a warpgroup: two buffers (one
// step's while the last one's may still be read) of block_m floats each.
std::uint32_t row_values_bytes(const Sm90aBackwardSpec& s) { return 2 * 2 * static_cast<std::uint32_t>(s.block_m) * 4; }
// dSᵀ of the CTA's keys against one query block: block_m/64 panels of block_n
// rows of 64 queries (one 128-byte row), two buffers (fast mode).
std::uint32_t ds_bytes(const Sm90aBackwardSpec& s) {
  return static_cast<std::uint32_t>(s.block_m / 64) * panel_bytes(s);
}
// A consumer warpgroup's part of a query block's dQ (Sm90aBackwardSpec::
// dq_columns, 64 rows), its f32 tile handed to its dQ writer, element
// (r, c) at r·dq_row_pitch + (c/8)·dq_group_pitch + (c mod 8)·4: for a TMA
// reduce-add one box of the dq_accum map (dq_accum_tensor_map), dq_columns/8
// groups of 8 columns, each 64 rows of 32 bytes; for the writer warps' reds
// rows of dq_columns values padded by 4 (the row halves of a warp's store
// fall in different banks).
constexpr std::uint32_t kDqGroupRow = 8 * 4;  // 8 columns of a row: 32 bytes
std::uint32_t dq_row_pitch(const Sm90aBackwardSpec& s) {
  return s.dq_by_tma_reduce() ? kDqGroupRow : static_cast<std::uint32_t>(s.dq_columns() + 4) * 4;
}
std::uint32_t dq_group_pitch(const Sm90aBackwardSpec& s) { return s.dq_by_tma_reduce() ? kWgM * kDqGroupRow : kDqGroupRow; }
std::uint32_t dq_tile_bytes(const Sm90aBackwardSpec& s) {
  return s.dq_by_tma_reduce() ? static_cast<std::uint32_t>(s.dq_columns() / 8) * dq_group_pitch(s) : kWgM * dq_row_pitch(s);
}

struct Smem {
  std::uint32_t k, v, ds, p, dq, row_values, ring, full, empty, kv_full, dq_full, dq_empty, launch;
};
Smem smem_of(const Sm90aBackwardSpec& s) {
  tile::SharedLayout layout;
  Smem m{};
  m.k = layout.buffer(s.kv_bytes(), tile::SharedLayout::kBaseAlignment);
  m.v = layout.buffer(s.kv_bytes(), tile::SharedLayout::kBaseAlignment);
  if (!s.deterministic || s.splits_columns()) m.ds = layout.buffer(2 * ds_bytes(s), tile::SharedLayout::kBaseAlignment);
  // d256: Pᵀ of the step (dV's A, both warpgroups' halves), one buffer.
  if (s.splits_columns()) m.p = layout.buffer(ds_bytes(s), tile::SharedLayout::kBaseAlignment);
  if (!s.deterministic)  // a TMA source: 128-byte aligned
    m.dq = s.dq_by_tma_reduce() ? layout.buffer(2 * dq_tile_bytes(s), tile::SharedLayout::kBaseAlignment)
                                : layout.buffer(2 * dq_tile_bytes(s));
  m.row_values = layout.buffer(2 * row_values_bytes(s));  // one set a consumer warpgroup
  m.ring = layout.ring(s.stage_bytes(), s.stages);
  m.full = layout.mbarriers(s.stages);
  m.empty = layout.mbarriers(s.stages);
  m.kv_full = layout.mbarriers(1);
  if (!s.deterministic) {  // one of each a consumer warpgroup
    m.dq_full = layout.mbarriers(2);
    m.dq_empty = layout.mbarriers(2);
  }
  m.launch = layout.launch_bytes();
  return m;
}

// The work: one item a CTA, a block of block_n keys of one KV head of one
// sequence. CTAs are numbered x fastest (heads_kv · batch by key blocks)
// and taken in groups of head_group (head, sequence) pairs, all the key
// blocks of a group together, key block first within it: a group's CTAs
// read the same Q and dO at about the same time (from L2, not DRAM: at 1k
// tokens, one head's key blocks had been 16 waves apart), and with a causal
// mask the first key blocks, which see the most queries, start first. Pair
// hb = KV head hb mod heads_kv of sequence hb / heads_kv. Its steps
// [0, group · blocks) walk the query blocks that see the keys, for each
// query head of the group: step t is query head kv_head·group + t / blocks,
// block first_block + t % blocks.
// Tile: m0 = the first key (within the sequence), n0 = the KV head,
// batch = the sequence.
class KeyBlockWork final : public OneItemPerCta {
 public:
  enum Extra { len_q, len_k, q_first, k_first, diag, first_block, blocks };

  KeyBlockWork(Kernel& k, const Sm90aBackwardSpec& s, const Reg& cu_q, const Reg& cu_k, const Reg& seq_q,
               const Reg& seq_k, const Reg& heads_q, const Reg& group, const Reg& window_left,
               const Reg& window_right, const Reg& head_group)
      : OneItemPerCta(k, "attention backward's KeyBlockWork") {
    Reg pairs = k.sreg(SReg::nctaid_x), key_blocks = k.sreg(SReg::nctaid_y);
    Reg cta = k.sreg(SReg::ctaid_y) * pairs + k.sreg(SReg::ctaid_x);
    Reg first_pair = k.div(cta, head_group * key_blocks) * head_group;
    Reg in_group = k.min(head_group, pairs - first_pair);  // the last group may be smaller
    Reg at = cta - first_pair * key_blocks, block = k.div(at, in_group), pair = k.reg(u32);
    k.rem(pair, at, in_group);
    k.add(pair, pair, first_pair);
    Reg heads_kv = k.div(heads_q, group), kv_head = k.reg(u32);
    k.rem(kv_head, pair, heads_kv);
    Reg b = k.div(pair, heads_kv);
    const Extent qs = sequence_extent(k, s.varlen, cu_q, b, seq_q), ks = sequence_extent(k, s.varlen, cu_k, b, seq_k);
    Reg n0 = (block * s.block_n).as(s32);
    Reg d = mask_diagonal(k, s.top_left, qs.length, ks.length);
    const QueryBlockRange seen = query_blocks(k,
                                              {.diag = d,
                                               .left = s.window_left,
                                               .right = s.window_right,
                                               .window_left = window_left,
                                               .window_right = window_right},
                                              qs.length, n0, s.block_n, s.block_m);
    Reg count = seen.hi - seen.lo;
    item_.tile = {n0.as(u32), kv_head, b, block};
    item_.kb0 = k.mov(s32, 0);
    item_.kb1 = count * group.as(s32);
    item_.extra = {qs.length, ks.length, qs.first.as(u32), ks.first.as(u32), d, seen.lo, count};
    valid_ = n0 < ks.length;
  }
};

class Backward final : public tile::WarpSpecializedDesign {
 public:
  explicit Backward(const Sm90aBackwardSpec& s)
      : s_(s), m_(smem_of(s)), k_(s.kernel_name(), Target::sm_90a), in_(s.dtype == DType::f16 ? f16 : bf16) {}

  Kernel& kernel() override { return k_; }

  // Both warpgroups on each step, 64 keys each.
  tile::WarpSpecializedConfig config() const override {
    return sm90a_attention_config(s_.stages, m_.full, m_.empty, s_.stage_bytes());
  }

  void params(tile::WarpSpecialized&) override {
    map_q_p_ = k_.param_bytes("map_q", 128, 64);
    map_k_p_ = k_.param_bytes("map_k", 128, 64);
    map_v_p_ = k_.param_bytes("map_v", 128, 64);
    map_do_p_ = k_.param_bytes("map_do", 128, 64);
    map_dq_p_ = k_.param_bytes("map_dq", 128, 64);
    lse_ = k_.param_ptr("lse");
    dk_ = k_.param_ptr("dK");
    dv_ = k_.param_ptr("dV");
    cu_q_ = k_.param_ptr("cu_seqlens_q");
    cu_k_ = k_.param_ptr("cu_seqlens_k");
    delta_ = k_.param_ptr("delta");
    dq_accum_ = k_.param_ptr("dq_accum");
    seq_q_ = k_.param(u32, "seq_q");
    seq_k_ = k_.param(u32, "seq_k");
    group_ = k_.param(u32, "group");
    rows_q_ = k_.param(u32, "rows_q");
    heads_q_ = k_.param(u32, "heads_q");
    for (const char* t : {"lse", "dk", "dv"})
      for (const char* n : {"_batch", "_head", "_row"}) strides_.push_back(k_.param(u64, std::string(t) + n));
    scale_ = k_.param(f32, "scale");
    scale_log2_ = k_.param(f32, "scale_log2");
    window_left_ = k_.param(s32, "window_left");
    window_right_ = k_.param(s32, "window_right");
    head_group_ = k_.param(u32, "head_group");
  }

  void prologue(tile::WarpSpecialized& ws) override {
    base_ = ws.smem_base();
    map_q_ = k_.param_generic_address(map_q_p_);
    map_k_ = k_.param_generic_address(map_k_p_);
    map_v_ = k_.param_generic_address(map_v_p_);
    map_do_ = k_.param_generic_address(map_do_p_);
    map_dq_ = k_.param_generic_address(map_dq_p_);
    kv_full_.emplace(k_, base_, m_.kv_full, 1);
    row_values_ready_.emplace(ws.warpgroup_barriers(128));
    ds_ready_.emplace(ws.named_barrier(256));
    // d256: warpgroup w's dV of the step has retired (Pᵀ's buffer free for
    // the other's next step): w arrives, the other waits.
    if (s_.splits_columns()) p_free_.emplace(ws.warpgroup_barriers(256));
    if (!s_.deterministic) {
      dq_full_.emplace(k_, base_, m_.dq_full, 2);
      dq_empty_.emplace(k_, base_, m_.dq_empty, 2);
    }
  }

  void initialize(tile::WarpSpecialized&) override {
    for (const Reg& map : {map_q_, map_k_, map_v_, map_do_}) k_.prefetch_tensormap(map);
    if (!s_.deterministic && s_.dq_by_tma_reduce()) k_.prefetch_tensormap(map_dq_);
    kv_full_->init(0, 1);
    // dQ's hand-over: full when the warpgroup's 128 threads have stored
    // their part, empty when its writer has read it (the reduce-add's one
    // thread, or the writer warp's 32 lanes).
    for (int w = 0; w < (s_.deterministic ? 0 : 2); ++w) {
      dq_full_->init(w, 128);
      dq_empty_->init(w, s_.dq_by_tma_reduce() ? 1 : 32);
    }
  }

  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized&) override {
    return std::make_unique<KeyBlockWork>(k_, s_, cu_q_, cu_k_, seq_q_, seq_k_, heads_q_, group_, window_left_,
                                          window_right_, head_group_);
  }

  // The producer warpgroup: warp 0 loads (the template's loads); in fast
  // mode warps 1 and 2 write dQ, one a consumer warpgroup (by TMA
  // reduce-add, lane 0 alone).
  void producer(tile::WarpSpecialized& ws) override {
    ws.load_stages();
    if (s_.deterministic) return;
    Reg writer = (ws.tid() >> 5) - (4 * 2 + 1);  // warps 9, 10 (u32: warp 8 wraps past them)
    if (s_.dq_by_tma_reduce())
      k_.if_then(writer < 2 && (ws.tid() & 31) == 0, [&] { reduce_dq(ws, writer); });
    else
      k_.if_then(writer < 2, [&] { add_dq_by_red(ws, writer); });
  }

  // Producer: K and V once per item (only when it has steps: nothing else
  // waits for them), then Q and dO of each step, head_dim/64 panels each.
  void load_item(const tile::WorkItem& w) override {
    k_.if_then(w.kb1 > w.kb0, [&] {
      k_.mbarrier_arrive_expect_tx(kv_full_->at(0), 2 * s_.kv_bytes());
      Reg row = w.extra[KeyBlockWork::k_first] + w.tile.m0;
      for (int p = 0; p < panels(); ++p) {
        const std::uint32_t panel = static_cast<std::uint32_t>(p) * panel_bytes(s_);
        k_.tma_load(at(base_ + (m_.k + panel)), map_k_, {p * 64, row, w.tile.n0, batch_coordinate(w)}, kv_full_->at(0));
        k_.tma_load(at(base_ + (m_.v + panel)), map_v_, {p * 64, row, w.tile.n0, batch_coordinate(w)}, kv_full_->at(0));
      }
    });
  }

  void load(const tile::LoadStep& s) override {
    const Step st = step_of(s.item, s.kb);
    Reg slot = base_ + m_.ring + s.state.stage() * s_.stage_bytes();
    Reg row = s.item.extra[KeyBlockWork::q_first] + st.m0.as(u32);
    for (int p = 0; p < panels(); ++p) {
      const std::uint32_t panel = static_cast<std::uint32_t>(p * s_.block_m) * kRow;
      k_.tma_load(at(slot + panel), map_q_, {p * 64, row, st.head, batch_coordinate(s.item)}, at(s.full));
      k_.tma_load(at(slot + (s_.q_bytes() + panel)), map_do_, {p * 64, row, st.head, batch_coordinate(s.item)},
                  at(s.full));
    }
  }

  void consumer_setup(tile::WarpSpecialized& ws) override {
    wg_ = ws.warpgroup();
    lane_ = k_.sreg(SReg::laneid);
    wg_tid_ = ws.tid() & 127;
    warp_keys_ = wg_ * key0() + (wg_tid_ >> 5) * 16;  // the warp's first key of the CTA's
    st_.emplace(c_tile(k_, 16, wg_queries(), "st"));
    dpt_.emplace(c_tile(k_, 16, wg_queries(), "dpt"));
    dk_acc_.emplace(c_tile(k_, 16, kv_columns(), "dk"));
    dv_acc_.emplace(c_tile(k_, 16, kv_columns(), "dv"));
    for (const Reg& r : dk_acc_->regs()) k_.mov(r, imm_f32(0.0f));
    for (const Reg& r : dv_acc_->regs()) k_.mov(r, imm_f32(0.0f));
    if (!s_.deterministic) dq_acc_.emplace(c_tile(k_, 16, s_.dq_columns(), "dq"));
    for (int i = 0; i < wg_queries() / 16; ++i) {
      pt_.push_back(a_tile(k_, 16, 16, in_, "pt" + std::to_string(i) + "_"));
      dst_.push_back(a_tile(k_, 16, 16, in_, "dst" + std::to_string(i) + "_"));
    }
    lc_ = tile::emit_lane_coords(k_, st_->steps(), lane_);
    // K and V (this warpgroup's 64 rows) and Q, dO are K-major panels of
    // 128-byte rows for Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ (8-row atoms: SBO one
    // atom, LBO unused). dO and Q (this warpgroup's columns of dV and dK)
    // are read N-major as B of Pᵀ·dO and dSᵀ·Q (their rows are queries:
    // wgmma's K), K as B of dS·K (its rows are keys), dSᵀ as the MN-major A
    // of dS·K (its rows are keys, wgmma's K; its 64 queries one 128-byte
    // row): LBO the next 64-column panel. V's and dO's descriptors are
    // K's and Q's plus a constant (v_desc, dos), added where they are used:
    // six registers fewer across the loop, which the consumers' 240 need
    // (d64 and d128 spilled without).
    k_desc_ = tile::warpgroup::smem_descriptor(k_, base_ + m_.k + wg_ * (key0() * kRow), 16, kAtom);
    // d256: the warpgroup's queries' rows of Q and dO, 32w.. (4 swizzle atoms into each panel).
    q_desc_ = tile::warpgroup::smem_descriptor(
        k_, s_.splits_columns() ? base_ + m_.ring + wg_ * static_cast<std::uint32_t>(wg_queries() * kRow) : base_ + m_.ring,
        16, kAtom);
    const std::uint32_t q_panel = static_cast<std::uint32_t>(s_.block_m) * kRow;
    const std::uint32_t kv_column0 = static_cast<std::uint32_t>((s_.head_dim - kv_columns()) / 64) * q_panel;
    q_mn_desc_ = tile::warpgroup::smem_descriptor(k_, base_ + m_.ring + wg_ * kv_column0, q_panel, kAtom);
    // d256: dK's and dV's A, every query's dSᵀ and Pᵀ (both warpgroups'
    // halves), K-major as K's panels (P's descriptor: p_desc()).
    if (s_.splits_columns()) ds_k_desc_ = tile::warpgroup::smem_descriptor(k_, base_ + m_.ds, 16, kAtom);
    if (!s_.deterministic) {
      // dQ's operands over every key: dSᵀ's panel of this warpgroup's
      // queries and K's columns of its part (a 32-column half starts inside
      // a panel's 128-byte rows, as the K steps above do).
      const std::uint32_t panel = panel_bytes(s_);
      const auto bytes_to = [&](int column) {
        return static_cast<std::uint32_t>(column / 64) * panel + column % 64 * 2;
      };
      ds_desc_ = tile::warpgroup::smem_descriptor(k_, base_ + m_.ds + wg_ * bytes_to(dq_row0()), panel, kAtom);
      k_mn_desc_ = tile::warpgroup::smem_descriptor(k_, base_ + m_.k + wg_ * bytes_to(dq_column0()), panel, kAtom);
    }
    row_values_ = base_ + m_.row_values + wg_ * row_values_bytes(s_);
    always_ = k_.setp(Cmp::eq, scale_log2_, scale_log2_);  // check_support refuses a scale that is not finite
  }

  // Each step, one query block against the warpgroup's keys (d256: all 64
  // keys against its half of the queries): Sᵀ and dPᵀ issued together; lse
  // and D staged meanwhile; Pᵀ from Sᵀ, then dSᵀ from dPᵀ (fast mode and
  // d256: stored to shared memory, d256 Pᵀ too); dV += Pᵀ·dO, dK += dSᵀ·Q,
  // then (fast mode) this warpgroup's dQ product once both warpgroups' dSᵀ
  // are stored; dQ handed to the writer warp; the slot freed.
  void mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& state) override {
    const tile::MbarrierPipeline& pipe = ws.pipeline();
    const Pred& lead = ws.leader();
    Reg count = w.kb1 - w.kb0;
    k_.if_then(count > 0, [&] {
      // lse and D of step t are loaded during step t - 1 (their latency hidden).
      const RowValues next{k_.reg(f32), k_.reg(f32)};
      load_row_values(w, step_of(w, k_.mov(s32, 0)), next);
      k_.mbarrier_wait_parity(kv_full_->at(0), 0);
      k_.for_range(0, count, 1, [&](Reg t) {
        Reg buffer = (t & 1).as(u32);
        pipe.wait(state);
        Reg stage_offset = k_.reg(u64);
        k_.cvt(stage_offset, state.stage() * (s_.stage_bytes() >> 4));
        k_.wgmma_fence();
        issue_transposed_scores(st_->regs(), k_desc_, q_desc_ + stage_offset);
        k_.wgmma_commit_group();
        issue_transposed_scores(dpt_->regs(), v_desc(), dos(q_desc_) + stage_offset);
        k_.wgmma_commit_group();
        const Step st = step_of(w, t);  // (its division under the products, not before them)
        Reg values = row_values_ + buffer * (row_values_bytes(s_) / 2);
        k_.if_then(wg_tid_ < s_.block_m, [&] {
          Reg slot = wg_tid_ << 2;
          k_.st(Space::shared, f32, at(values + slot), lse_in_log2(next.lse));
          k_.st(Space::shared, f32, at(values + slot, s_.block_m * 4), next.delta);
        });
        k_.if_then(t + 1 < count, [&] { load_row_values(w, step_of(w, t + 1), next); });
        row_values_ready_->of(wg_).sync();
        // d256: the values of the warpgroup's queries.
        if (s_.splits_columns()) values = values + wg_ * static_cast<std::uint32_t>(wg_queries() * 4);
        k_.wgmma_wait_group(1);  // Sᵀ
        const auto p = [&] {
          scores_to_p(w, st, values);
          pack_accumulator_as_a(k_, *st_, pt_);
        };
        // Pᵀ under dPᵀ where the registers allow it (d128; at d64, whose
        // 128-query blocks give Sᵀ and dPᵀ 64 each, and at d256, ptxas then
        // serializes the wgmma: C7512).
        if (s_.head_dim == 128) own_block(p);
        else p();
        if (s_.splits_columns()) {
          // Pᵀ's buffer once the other warpgroup's dV of the last step has retired.
          k_.if_then(t > 0, [&] { p_free_->of(wg_ ^ 1).sync(); });
          store_a_tiles(pt_, base_ + m_.p);
        }
        k_.wgmma_wait_group(0);  // dPᵀ
        dp_to_ds(values);
        pack_accumulator_as_a(k_, *dpt_, dst_);
        // dSᵀ is stored before the wgmma that read it from registers are
        // issued: until they retire no other instruction may touch it.
        if (stores_ds()) store_a_tiles(dst_, base_ + m_.ds + buffer * ds_bytes(s_));
        const auto release = [&] { k_.if_then(lead, [&] { pipe.release(state.stage()); }); };
        if (s_.splits_columns()) products_from_shared(t, count, buffer, stage_offset, release);
        else products_from_registers(buffer, stage_offset, release);
        ++state;
      });
    });
  }

  // d64, d128: dV += Pᵀ·dO and dK += dSᵀ·Q with Pᵀ and dSᵀ from registers,
  // then (fast mode) dQ; the slot freed.
  void products_from_registers(const Reg& buffer, const Reg& stage_offset, const std::function<void()>& release) {
        k_.wgmma_fence();
        issue_with_a_from_registers(dv_acc_->regs(), pt_, dos(q_mn_desc_) + stage_offset);
        k_.wgmma_commit_group();
        issue_with_a_from_registers(dk_acc_->regs(), dst_, q_mn_desc_ + stage_offset);
        k_.wgmma_commit_group();
        if (s_.deterministic) {
          k_.wgmma_wait_group(0);
          release();
        } else {
          // dQ last: it needs both warpgroups' dSᵀ (the barrier in issue_dq),
          // and the warpgroup that reaches the barrier first waits there with
          // its dV and dK already queued on the tensor pipe, which runs them
          // while the other warpgroup finishes its softmax (session 7's
          // order, dV, dQ, dK, left the first one's dK behind the barrier:
          // its largest stall).
          issue_dq(buffer);
          k_.wgmma_wait_group(0);
          hand_dq_over(buffer);
          // After the hand-over (freed before it, d64 with a window spilled 8 bytes).
          release();
        }
  }

  // d256: once both warpgroups' Pᵀ and dSᵀ halves are stored, dV += Pᵀ·dO,
  // dK += dSᵀ·Q (A from shared memory) and (fast mode) dQ, issued
  // together; dV retired: Pᵀ's buffer freed for the other warpgroup; dK
  // retired: the slot freed (its next load under dQ and the hand-over).
  void products_from_shared(const Reg& t, const Reg& count, const Reg& buffer, const Reg& stage_offset,
                            const std::function<void()>& release) {
    share_ds();
    k_.wgmma_fence();
    issue_from_shared(dv_acc_->regs(), p_desc(), dos(q_mn_desc_) + stage_offset);
    k_.wgmma_commit_group();
    issue_from_shared(dk_acc_->regs(), ds_k_desc_ + ds_offset(buffer), q_mn_desc_ + stage_offset);
    k_.wgmma_commit_group();
    if (!s_.deterministic) issue_dq(buffer);
    const int after_dk = s_.deterministic ? 0 : 1;  // groups issued after dK
    k_.wgmma_wait_group(after_dk + 1);              // dV
    k_.if_then(t + 1 < count, [&] { p_free_->of(wg_).arrive(); });
    k_.wgmma_wait_group(after_dk);  // dK
    release();
    if (!s_.deterministic) {
      k_.wgmma_wait_group(0);
      hand_dq_over(buffer);
    }
  }

  // dK·scale and dV of the warp's keys that exist (zero where no query
  // sees them), the warpgroup's columns.
  void finish(const tile::WorkItem& w) override {
    Reg warp_key = w.extra[KeyBlockWork::k_first] + w.tile.m0 + warp_keys_;
    Reg keys_left = w.extra[KeyBlockWork::len_k] - (w.tile.m0 + warp_keys_).as(s32);
    Reg column_bytes = k_.reg(u64);
    k_.mul_wide(column_bytes, wg_, 2 * (s_.head_dim - kv_columns()));
    const auto address = [&](const Reg& base, int view) {
      return element_address(k_, base,
                             element_offset(k_, w.tile.batch, strides_[3 * view], w.tile.n0, strides_[3 * view + 1],
                                            warp_key, strides_[3 * view + 2]),
                             2) +
             column_bytes;
    };
    Reg dk_row_bytes = k_.reg(u64), dv_row_bytes = k_.reg(u64);
    k_.shl(dk_row_bytes, strides_[3 * kDk + 2], 1);
    k_.shl(dv_row_bytes, strides_[3 * kDv + 2], 1);
    store_rows(k_, {*dk_acc_}, address(dk_, kDk), dk_row_bytes, keys_left, in_, scale_, lane_);
    store_rows(k_, {*dv_acc_}, address(dv_, kDv), dv_row_bytes, keys_left, in_, std::nullopt, lane_);
  }

 private:
  enum View { kLse, kDk, kDv };  // strides_ triples
  struct Step {
    Reg head, m0, rows_valid;  // u32, s32, s32: the query head, its block's first row and rows left
  };
  struct RowValues {
    Reg lse, delta;
  };

  int panels() const { return s_.head_dim / 64; }
  // Sᵀ's and dPᵀ's queries a warpgroup: all the block's, or at head_dim
  // 256 (both warpgroups on the same 64 keys) half, so that each product
  // is computed once.
  int wg_queries() const { return s_.splits_columns() ? s_.block_m / 2 : s_.block_m; }
  // Whether dSᵀ goes through shared memory: for dQ (fast mode), and for dK
  // at head_dim 256.
  bool stores_ds() const { return !s_.deterministic || s_.splits_columns(); }
  // Consumer warpgroup w's keys start at w·key0() of the CTA's, its
  // columns of dK and dV at w·(head_dim - kv_columns()).
  int key0() const { return s_.splits_columns() ? 0 : kWgM; }
  int kv_columns() const { return s_.splits_columns() ? s_.head_dim / 2 : s_.head_dim; }
  // Consumer warpgroup w's part of dQ starts at query w·dq_row0() of the
  // block and column w·dq_column0().
  int dq_row0() const { return s_.block_m - kWgM; }
  int dq_column0() const { return s_.head_dim - s_.dq_columns(); }
  // `body` as a basic block of its own (a branch on a predicate that always
  // holds), as the forward's softmax: in one block with the wait for dPᵀ,
  // ptxas hoists that wait (WARPGROUP.DEPBAR.LE gsb0, 0x0) above Pᵀ's
  // exponentials (nvdisasm: after the first MUFU.EX2), which then wait for
  // the dPᵀ they should overlap.
  void own_block(const std::function<void()>& body) { k_.if_then(always_, body); }
  // V's descriptor from K's (V's buffer a constant distance on), dO's (the
  // slot's second half) from one of Q's.
  Reg v_desc() { return k_desc_ + ((m_.v - m_.k) >> 4); }
  // d256: Pᵀ's buffer's descriptor from dSᵀ's (a constant distance on).
  Reg p_desc() { return ds_k_desc_ + ((m_.p - m_.ds) >> 4); }
  Reg dos(const Reg& q_desc) { return q_desc + (s_.q_bytes() >> 4); }
  // Varlen maps have one batch (the rows run on across sequences).
  Reg batch_coordinate(const tile::WorkItem& w) { return s_.varlen ? k_.mov(u32, 0) : w.tile.batch; }

  Step step_of(const tile::WorkItem& w, const Reg& t) {
    const Reg& blocks = w.extra[KeyBlockWork::blocks];
    Reg head_in_group = k_.div(t, blocks), block = k_.reg(s32);
    k_.rem(block, t, blocks);
    Reg m0 = (w.extra[KeyBlockWork::first_block] + block) * s_.block_m;
    return {w.tile.n0 * group_ + head_in_group.as(u32), m0, w.extra[KeyBlockWork::len_q] - m0};
  }

  // Into r, query row m0 + tid of the step (threads tid < block_m of the
  // warpgroup): its lse (+inf where the row is padding) and D (0 there).
  // Nothing here reads the loaded values: an instruction that did would
  // wait out the load (L2's latency) on the consumers' path; they are read
  // a step later (lse_in_log2).
  void load_row_values(const tile::WorkItem& w, const Step& st, const RowValues& r) {
    k_.mov(r.lse, imm_f32(std::numeric_limits<float>::infinity()));
    k_.mov(r.delta, imm_f32(0.0f));
    k_.if_then(wg_tid_ < s_.block_m && wg_tid_.as(s32) < st.rows_valid, [&] {
      Reg row = w.extra[KeyBlockWork::q_first] + st.m0.as(u32) + wg_tid_;
      Reg at_lse = element_address(
          k_, lse_, element_offset(k_, w.tile.batch, strides_[0], st.head, strides_[1], row, strides_[2]), 4);
      k_.ld(Space::global, f32, r.lse, at(at_lse));
      // delta is (head, workspace row); the sequence's workspace rows start at b·seq_q (dense) or cu[b].
      Reg ws_row = (s_.varlen ? w.extra[KeyBlockWork::q_first] : w.tile.batch * seq_q_) + st.m0.as(u32) + wg_tid_;
      Reg at_delta = k_.reg(u64);
      k_.mul_wide(at_delta, st.head * rows_q_ + ws_row, 4);
      k_.ld(Space::global, f32, r.delta, at(delta_ + at_delta));
    });
  }

  // lse in log2 units, +inf where it is -inf (a row that sees no key) or
  // +inf (padding), so that P = exp2(s - lse) is 0 there.
  Reg lse_in_log2(const Reg& lse) {
    const Src plus_infinity = imm_f32(std::numeric_limits<float>::infinity());
    Reg x = k_.reg(f32);
    k_.mul(x, lse, imm_f32(kLog2e));
    k_.selp(x, plus_infinity, x, k_.setp(Cmp::eq, x, imm_f32(-std::numeric_limits<float>::infinity())));
    return x;
  }

  // acc = rows·colsᵀ over head_dim: A the warpgroup's 64 rows of K or V
  // (K-major), B the slot's Q or dO (K-major): Sᵀ or dPᵀ (uncommitted).
  void issue_transposed_scores(const Regs& acc, const Reg& a_desc, const Reg& b_desc) {
    for (int j = 0; j < s_.head_dim / 16; ++j) {
      const std::uint32_t a_off = (j / 4) * panel_bytes(s_) + (j % 4) * 32,
                          b_off = (j / 4) * s_.block_m * kRow + (j % 4) * 32;
      k_.wgmma_mma_async(in_, acc, a_desc + (a_off >> 4), b_desc + (b_off >> 4), j > 0, WgmmaMajor::k, WgmmaMajor::k);
    }
  }

  // acc += a·B over the block's queries (k-steps of 16): a the packed Pᵀ
  // or dSᵀ, B the slot's dO or Q read N-major (uncommitted).
  void issue_with_a_from_registers(const Regs& acc, const std::vector<tile::RegisterTile>& a, const Reg& b_desc) {
    for (int kk = 0; kk < s_.block_m / 16; ++kk)
      k_.wgmma_mma_async(in_, in_, acc, a[static_cast<std::size_t>(kk)].regs(), b_desc + (kk * 16 * kRow >> 4), true,
                         WgmmaMajor::mn);
  }

  // Sᵀ masked where the mask cuts the block, then Pᵀ = exp2(Sᵀ·scale·log2e
  // - lse·log2e), column by column (a column is a query) in place.
  void scores_to_p(const tile::WorkItem& w, const Step& st, const Reg& values) {
    // d256: the warpgroup's Sᵀ starts at query wg_queries()·w of the block.
    Reg query0 = s_.splits_columns() ? st.m0 + (lc_.col + wg_ * static_cast<std::uint32_t>(wg_queries())).as(s32)
                                     : st.m0 + lc_.col.as(s32);
    const MaskGeometry mask{.keys_are_rows = true,
                            .query0 = query0,
                            .key0 = (w.tile.m0 + warp_keys_ + lc_.row).as(s32),
                            .len_k = w.extra[KeyBlockWork::len_k],
                            .diag = w.extra[KeyBlockWork::diag],
                            .left = s_.window_left,
                            .right = s_.window_right,
                            .window_left = window_left_,
                            .window_right = window_right_};
    k_.if_then(mask_cuts(mask, st.m0, s_.block_m, w.tile.m0.as(s32), s_.block_n), [&] { apply_mask(k_, *st_, mask); });
    by_column(values, 0, [&](const Reg& lse_log2, const Reg& x, const Reg&) {
      Reg minus = k_.reg(f32);
      k_.neg(minus, lse_log2);
      k_.fma(x, x, scale_log2_, minus);
      // .ftz (PTX ISA 9.7.3.21): one MUFU.EX2 a score (without it ptxas
      // keeps subnormal results with a compare and two multiplies more). A
      // P below 2^-126 is flushed to 0: the row's P sum to 1, so what it
      // would add to dV, dK or dQ is below f32's rounding of the sums.
      k_.ex2_approx(x, x, true);
    });
  }

  // dSᵀ = Pᵀ ∘ (dPᵀ - D), in dPᵀ's registers.
  void dp_to_ds(const Reg& values) {
    by_column(values, s_.block_m * 4, [&](const Reg& d, const Reg& p, const Reg& dp) {
      k_.sub(dp, dp, d);
      k_.mul(dp, dp, p);
    });
  }

  // For each query column the thread holds: its staged value (at `offset`
  // into the step's lse/D buffer) and each of its Sᵀ and dPᵀ values.
  void by_column(const Reg& values, std::uint32_t offset,
                 const std::function<void(const Reg&, const Reg&, const Reg&)>& body) {
    Reg col_bytes = values + (lc_.col << 2);
    std::vector<std::int64_t> done;
    for (std::int64_t v = 0; v < st_->steps().values(); ++v) {
      const std::int64_t col = st_->steps().value_offset(v).second;
      if (std::find(done.begin(), done.end(), col) != done.end()) continue;
      done.push_back(col);
      Reg x = k_.reg(f32);
      k_.ld(Space::shared, f32, x, at(col_bytes, static_cast<std::int64_t>(offset) + col * 4));
      for (std::int64_t u = v; u < st_->steps().values(); ++u)
        if (st_->steps().value_offset(u).second == col)
          body(x, st_->regs()[static_cast<std::size_t>(u)], dpt_->regs()[static_cast<std::size_t>(u)]);
    }
  }

  // The warpgroup's dSᵀ or Pᵀ (`tiles`, packed: 64 keys x block_m queries,
  // bf16; at head_dim 256 its wg_queries() queries) to its rows (columns)
  // of `buffer` in the 128-byte swizzle wgmma reads (PTX ISA 9.7.15.5.1):
  // queries 64p.. in panel p.
  void store_a_tiles(const std::vector<tile::RegisterTile>& tiles, const Reg& buffer) {
      const tile::LaneCoords alc = tile::emit_lane_coords(k_, tiles[0].steps(), lane_);
      const layout::Swizzle swz = layout::smem_swizzle(layout::SmemSwizzle::b128, 2);
      const std::int64_t swz_mask = ((std::int64_t{1} << swz.bits()) - 1) << swz.base();
      // Element (key, query) at panel·(block_n·64) + key·64 + query mod 64,
      // swizzled on element offsets: its 16-byte chunk (bits base..) XORed
      // with its row mod 8 (bits base + shift..). A thread's rows, key_row
      // and key_row + 8, share that term, and its values' chunks come from
      // their query offset C alone (alc.col is below a chunk): each store is
      // at the thread's address + (C ^ term) + an immediate, 8 distinct
      // (C ^ term) a thread (a register each; the swizzled address of every
      // store had taken 32).
      Reg key_row = warp_keys_ + alc.row;
      Reg term = ((key_row << 6) >> swz.shift()) & swz_mask;
      // d256: the warpgroup's queries start at 32w, bit 5 of the element
      // offset, above every C (< 32): XORed into the term.
      if (s_.splits_columns()) term = term ^ (wg_ << 5);
      Reg thread_at = buffer + ((((key_row << 6) + alc.col) << 1));
      std::map<std::int64_t, Reg> chunk_at;
      for (int kk = 0; kk < static_cast<int>(tiles.size()); ++kk)
        for (std::size_t r = 0; r < tiles[static_cast<std::size_t>(kk)].regs().size(); ++r) {
          const auto [dr, dc] =
              tiles[static_cast<std::size_t>(kk)].steps().value_offset(static_cast<std::int64_t>(2 * r));
          const std::int64_t c = 16 * (kk % 4) + dc;
          if (!chunk_at.count(c)) chunk_at.emplace(c, thread_at + ((term ^ c) << 1));
          const std::int64_t rest = (kk / 4) * std::int64_t{s_.block_n} * 64 + (dr << 6);
          k_.st(Space::shared, b32, at(chunk_at.at(c), 2 * rest), tiles[static_cast<std::size_t>(kk)].regs()[r]);
        }
  }

  // Both warpgroups' dSᵀ (d256: and Pᵀ) in the buffers and visible to the async proxy
  // (fence.proxy.async, PTX ISA 9.7.13.4.13) for the wgmma that read it.
  void share_ds() {
    k_.fence_proxy_async_shared();
    ds_ready_->sync();
  }

  // d256: acc += A·B over the block's queries (uncommitted), A Pᵀ or dSᵀ
  // of every query from its buffer (K-major: a key's 64 queries one
  // 128-byte row), B the slot's dO or Q read N-major.
  void issue_from_shared(const Regs& acc, const Reg& a_desc, const Reg& b_desc) {
    for (int kk = 0; kk < s_.block_m / 16; ++kk)
      k_.wgmma_mma_async(in_, acc, a_desc + (kk * 32 >> 4), b_desc + (kk * 16 * kRow >> 4), true, WgmmaMajor::k,
                         WgmmaMajor::mn);
  }

  // The step's dSᵀ buffer's offset (descriptor units, 16 bytes).
  Reg ds_offset(const Reg& buffer) {
    Reg offset = k_.reg(u64);
    k_.cvt(offset, buffer * (ds_bytes(s_) >> 4));
    return offset;
  }

  // Fast mode, once both warpgroups' dSᵀ are in the buffer (share_ds; at
  // d256 done before dK), this warpgroup's dQ product (committed): its part
  // (dq_columns) over the CTA's keys, so each element of dQ is added once.
  void issue_dq(const Reg& buffer) {
    if (!s_.splits_columns()) share_ds();
    Reg offset = ds_offset(buffer);
    for (int kk = 0; kk < s_.block_n / 16; ++kk)
      k_.wgmma_mma_async(in_, dq_acc_->regs(), ds_desc_ + offset + (kk * 16 * kRow >> 4),
                         k_mn_desc_ + (kk * 16 * kRow >> 4), kk > 0, WgmmaMajor::mn, WgmmaMajor::mn);
    k_.wgmma_commit_group();
  }

  // Step t's dQ (complete) to this warpgroup's tile for its writer, once
  // the writer has freed it (the empty barrier's phase t completed, PTX ISA
  // 9.7.13.15.16; `parity` is t & 1: one item a CTA, so t counts the
  // phases): two adjacent columns a store (the accumulator's c0, c1), at
  // the thread's address + an immediate (dq_row_pitch). In the TMA box a
  // warp's store covers its 8 rows lc.row of 8 columns: 256 contiguous
  // bytes (2 wavefronts, its least). For a reduce-add the stores are made
  // visible to its async proxy (fence.proxy.async, 9.7.13.4.13); each
  // thread's arrival on the full barrier releases them (9.7.13.15.13).
  void hand_dq_over(const Reg& parity) {
    dq_empty_->wait(wg_, parity);
    const std::uint32_t row_pitch = dq_row_pitch(s_), group_pitch = dq_group_pitch(s_);
    Reg thread_at = base_ + m_.dq + wg_ * dq_tile_bytes(s_) + ((wg_tid_ >> 5) * 16 + lc_.row) * row_pitch +
                    (lc_.col << 2);
    for (std::int64_t v = 0; v + 1 < dq_acc_->steps().values(); v += 2) {
      const auto [dr, dc] = dq_acc_->steps().value_offset(v);
      k_.st(Space::shared, f32, at(thread_at, dr * row_pitch + dc / 8 * group_pitch),
            Regs{dq_acc_->regs()[static_cast<std::size_t>(v)], dq_acc_->regs()[static_cast<std::size_t>(v + 1)]});
    }
    if (s_.dq_by_tma_reduce()) k_.fence_proxy_async_shared();
    dq_full_->arrive(wg_);
  }

  // A dQ writer by TMA reduce-add (lane 0 of a producer warp, for consumer
  // warpgroup `writer`; FA3's dQ writer): each step, once the warpgroup's
  // tile is full, adds it into dq_accum with one TMA reduce-add (cp.reduce.
  // async.bulk.tensor .add, PTX ISA 9.7.9.25.5.2: each element an atomic
  // add in L2) of the map's box (dq_columns/8 groups of 8 columns by 64
  // rows), waits until it has read the tile (cp.async.bulk.wait_group.read,
  // 9.7.9.25.5.4) and frees it. Step t waits for the full barrier's phase
  // t (one item a CTA: KeyBlockWork). A box's rows past its sequence hold
  // ±0 (P is 0 there): they add nothing to the next sequence's rows, and
  // the map drops those past the workspace's last.
  void reduce_dq(tile::WarpSpecialized& ws, const Reg& writer) {
    ws.source().for_each([&](const tile::WorkItem& w) {
      Reg count = w.kb1 - w.kb0;
      // The tile starts free; it is freed after each step but the last (an
      // item's arrivals match its steps' waits).
      k_.if_then(count > 0, [&] { dq_empty_->arrive(writer); });
      Reg tile = base_ + m_.dq + writer * dq_tile_bytes(s_);
      Reg group0 = writer * (dq_column0() / 8);
      Reg sequence_row0 = s_.varlen ? w.extra[KeyBlockWork::q_first] : w.tile.batch * seq_q_;
      k_.for_range(0, count, 1, [&](Reg t) {
        const Step st = step_of(w, t);
        Reg row = sequence_row0 + (st.m0 + (writer * dq_row0()).as(s32)).as(u32);
        dq_full_->wait(writer, t & 1);
        k_.tma_reduce_add(map_dq_, {0, row, group0, st.head}, at(tile));
        k_.bulk_commit_group();
        k_.bulk_wait_group_read(0);
        k_.if_then(t + 1 < count, [&] { dq_empty_->arrive(writer); });
      });
    });
  }

  // A dQ writer warp adding by red (d256; of consumer warpgroup `writer`):
  // each step, once the warpgroup's tile is full, its rows that exist added
  // into dq_accum by red.global.add.v4.f32 (PTX ISA 9.7.13.8, sm_90): a
  // lane's 4 adjacent columns, a row's dq_columns by dq_columns/4 lanes, so
  // one red of the warp adds 512 bytes (1 row at 128 columns, 2 at 64); the
  // tile freed for the next step. Step t waits for the full barrier's phase
  // t (one item a CTA: KeyBlockWork).
  void add_dq_by_red(tile::WarpSpecialized& ws, const Reg& writer) {
    Reg lane = k_.sreg(SReg::laneid);
    const std::uint32_t row_bytes = dq_row_pitch(s_);
    const int lanes_per_row = s_.dq_columns() / 4, rows_per_red = 32 / lanes_per_row;  // 16 or 32 lanes: 2 or 1
    Reg lane_row = lane >> (lanes_per_row == 16 ? 4 : 5), lane_column = (lane & (lanes_per_row - 1)) << 2;
    ws.source().for_each([&](const tile::WorkItem& w) {
      Reg count = w.kb1 - w.kb0;
      // The tile starts free; it is freed after each step but the last (an
      // item's arrivals match its steps' waits).
      k_.if_then(count > 0, [&] { dq_empty_->arrive(writer); });
      k_.for_range(0, count, 1, [&](Reg t) {
        const Step st = step_of(w, t);
        dq_full_->wait(writer, t & 1);
        Reg tile = base_ + m_.dq + writer * dq_tile_bytes(s_) + lane_row * row_bytes + (lane_column << 2);
        Reg m0 = st.m0 + (writer * dq_row0()).as(s32);
        Reg ws_row0 = (s_.varlen ? w.extra[KeyBlockWork::q_first] : w.tile.batch * seq_q_) + m0.as(u32);
        Reg rows = k_.min(w.extra[KeyBlockWork::len_q] - m0, kWgM);
        // The lane's first row's address; its rows follow a workspace row
        // (heads_q·head_dim values) apart. Two reds in flight an iteration:
        // the next load into a red's source registers waits until the red
        // has read them. The reds are not under a branch: a lane's row past
        // `rows` (its queries past the sequence, whose P and so dS and dQ are
        // ±0) is added into row rows - 1, which it leaves unchanged (`last`,
        // the lane's last row counted from its first, may be -1).
        Reg lane_offset = k_.reg(u64);
        k_.mul_wide(lane_offset, ((ws_row0 + lane_row) * heads_q_ + st.head) * s_.head_dim + writer * dq_column0() +
                                     lane_column, 4);
        Reg lane_at = dq_accum_ + lane_offset;
        Reg last = rows - 1 - lane_row.as(s32), row_bytes_global = heads_q_ * (s_.head_dim * 4);
        constexpr int kInFlight = 2;
        k_.for_range(0, rows, kInFlight * rows_per_red, [&](Reg r) {
          std::vector<Regs> x;
          for (int i = 0; i < kInFlight; ++i) {
            x.push_back(Regs{k_.reg(f32), k_.reg(f32), k_.reg(f32), k_.reg(f32)});
            k_.ld(Space::shared, f32, x.back(), at(tile + r.as(u32) * row_bytes, i * rows_per_red * row_bytes));
          }
          for (int i = 0; i < kInFlight; ++i) {
            Reg offset = k_.reg(s64);
            k_.mul_wide(offset, k_.min(r + i * rows_per_red, last), row_bytes_global.as(s32));
            k_.red(Space::global, AtomOp::add, f32, at(lane_at + offset.as(u64)), x[static_cast<std::size_t>(i)]);
          }
        });
        k_.if_then(t + 1 < count, [&] { dq_empty_->arrive(writer); });
      });
    });
  }

  Sm90aBackwardSpec s_;
  Smem m_;
  Kernel k_;
  Type in_;
  ParamRef map_q_p_, map_k_p_, map_v_p_, map_do_p_, map_dq_p_;
  Reg map_q_, map_k_, map_v_, map_do_, map_dq_, lse_, dk_, dv_, cu_q_, cu_k_, delta_, dq_accum_;
  Reg seq_q_, seq_k_, group_, rows_q_, heads_q_, scale_, scale_log2_, window_left_, window_right_, head_group_;
  std::vector<Reg> strides_;  // (batch, head, row) of lse, dK, dV
  Reg base_;
  std::optional<tile::MbarrierArray> kv_full_;
  std::optional<tile::NamedBarrierSet> row_values_ready_;
  std::optional<tile::NamedBarrier> ds_ready_;
  std::optional<tile::NamedBarrierSet> p_free_;
  std::optional<tile::MbarrierArray> dq_full_, dq_empty_;
  // The consumers'.
  Reg wg_, lane_, wg_tid_, warp_keys_, row_values_;
  Reg k_desc_, q_desc_, q_mn_desc_, ds_desc_, k_mn_desc_, ds_k_desc_;
  std::optional<tile::RegisterTile> st_, dpt_, dk_acc_, dv_acc_, dq_acc_;
  std::vector<tile::RegisterTile> pt_, dst_;
  tile::LaneCoords lc_;
  Pred always_;  // true (own_block)
};

}  // namespace

std::uint32_t Sm90aBackwardSpec::shared_bytes() const { return smem_of(*this).launch; }

std::string Sm90aBackwardSpec::kernel_name() const {
  return "warpforge_attention_bwd_sm90a_kv_" + std::string(runtime::name(dtype)) + "_d" + std::to_string(head_dim) +
         "_" + std::to_string(block_n) + "x" + std::to_string(block_m) + "s" + std::to_string(stages) +
         (varlen ? "_varlen" : "") + (window_left ? "_wl" : "") + (window_right ? "_wr" : "") +
         (top_left ? "_tl" : "") + (deterministic ? "_det" : "");
}

Sm90aBackwardSpec sm90a_backward_spec(const AttentionProblem& p) {
  Sm90aBackwardSpec s;
  s.dtype = p.dtype;
  s.head_dim = static_cast<int>(p.head_dim);
  // FA3's tiles: 128 queries a step at head_dim 64 (twice the work a step
  // for the chain's fixed cost; the registers fit), 64 at 128 and 256. At
  // 256, 64 keys a CTA and one ring slot, as FA3 (its 64 x 80 tile, one
  // stage of Q and dO): K, V, a slot and the dQ hand-over take 212 KB of
  // the 227.
  s.block_m = p.head_dim == 64 ? 128 : 64;
  s.block_n = p.head_dim == 256 ? 64 : 128;
  s.stages = p.head_dim == 256 ? 1 : 2;
  take_mask_flags(s, p);
  s.deterministic = p.deterministic;
  return s;
}

ptx::Module build_sm90a_backward_kv(const Sm90aBackwardSpec& spec) {
  if (spec.head_dim != 64 && spec.head_dim != 128 && spec.head_dim != 256)
    throw OpsError("the sm90a attention backward takes head_dim 64, 128 or 256, not " + std::to_string(spec.head_dim));
  if (spec.block_n != (spec.head_dim == 256 ? 64 : 128))
    throw OpsError("the sm90a attention backward at head_dim " + std::to_string(spec.head_dim) + " takes " +
                   (spec.head_dim == 256 ? "64" : "128") + "-key blocks, not " + std::to_string(spec.block_n));
  Backward design(spec);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
