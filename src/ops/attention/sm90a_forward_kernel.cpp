#include "sm90a_forward_kernel.hpp"

#include <bit>
#include <cmath>
#include <functional>
#include <memory>
#include <variant>

#include "sm80_mask.hpp"
#include "sm80_softmax.hpp"
#include "sm80_tiles.hpp"
#include "sm90a_design.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/mbarrier_array.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/smem_swizzle.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {

using namespace dsl;
using namespace attention_sm80;  // the fragments, mask and softmax: a warp's 16 rows are laid out alike
using runtime::DType;

namespace {

constexpr std::uint32_t kRow = 128;    // bytes of a panel row: 64 elements, the 128-byte swizzle's span
constexpr std::uint32_t kAtom = 8 * kRow;  // 8 rows: the swizzle's repeat (a wgmma core matrix group)
const layout::Swizzle kSwizzle128 = layout::smem_swizzle(layout::SmemSwizzle::b128, 1);  // TMA's 128-byte mode

// Where the design's buffers sit in shared memory (tile::SharedLayout).
// K's ring is the template's pipeline, V's the design's own (its slots and
// barriers beside it, walked in step with K's).
struct Smem {
  std::uint32_t q, k, v, full, empty, v_full, v_empty, q_full, q_empty, launch;
};
Smem smem_of(const Sm90aAttentionSpec& s) {
  tile::SharedLayout layout;
  Smem m{};
  m.q = layout.buffer(s.q_bytes() * s.q_buffers(), tile::SharedLayout::kBaseAlignment);
  m.k = layout.ring(s.stage_bytes(), s.stages);
  m.v = layout.ring(s.stage_bytes(), s.stages);
  m.full = layout.mbarriers(s.stages);
  m.empty = layout.mbarriers(s.stages);
  m.v_full = layout.mbarriers(s.stages);
  m.v_empty = layout.mbarriers(s.stages);
  m.q_full = layout.mbarriers(s.q_buffers());
  m.q_empty = layout.mbarriers(s.q_buffers());
  m.launch = layout.launch_bytes();
  return m;
}

// The work: items of block_m() query rows of one head of one sequence, in the
// order u = (batch · heads + head) · blocks + (blocks - 1 - block): a head's
// blocks together (their K and V shared in L2), its last (under a causal
// mask the longest) first. A CTA that is not persistent takes item ctaid.x.
// A persistent CTA (one an SM) takes items ctaid.x, + nctaid.x, ...; paired
// (under a mask a block's work grows or shrinks with its index), its
// units are pairs of a head's blocks, its last and first, then its last
// but one and second, ...: every pair the same work, so that a fixed stride
// shares them out evenly (the middle block of an odd count alone). Each
// role walks the same items. Tile: m0 = the first query row (within the
// sequence; negative for a head's ragged first block: run), n0 = the head, batch = the sequence, unit = the unit's index.
// extra: len_q, len_k (s32), q_first, k_first (the sequence's first rows in
// the tensors, u32), diag (s32). Items with no query row (a varlen sequence
// shorter than the longest) are skipped. A spec that is not persistent
// emits no loop (its CTA's one item: the registers the loop would hold stay
// free).
class QueryBlocks final : public tile::WorkSource {
 public:
  enum Extra { len_q, len_k, q_first, k_first, diag };

  // items: the units (items, or pairs where paired); blocks: a head's
  // blocks of block_m() queries.
  struct Params {
    Reg cu_q, cu_k, seq_q, seq_k, window_left, window_right, items, blocks, heads;
  };
  QueryBlocks(Kernel& k, const Sm90aAttentionSpec& s, const Params& p) : k_(k), s_(s), p_(p) {}

  void for_each(const std::function<void(const tile::WorkItem&)>& body, const Reg* offset,
                int /*stride*/) const override {
    if (offset) throw TileError("attention's QueryBlocks: the consumer warpgroups share each item (cooperative)");
    Kernel& k = k_;
    Reg u = k.mov(u32, k.sreg(SReg::ctaid_x));
    auto unit = [&] {
      const int per_unit = s_.paired ? 2 : 1;
      Reg units_a_head = s_.paired ? (p_.blocks + 1) >> 1 : p_.blocks;
      Reg head_of_sequence = k.div(u, units_a_head);
      Reg first = u - head_of_sequence * units_a_head;  // the unit within the head
      if (per_unit == 1) return run(head_of_sequence, p_.blocks - (first + 1), u, body);
      k.for_range(0, 2, 1, [&](Reg t) {
        Reg block = k.selp(p_.blocks - (first + 1), first, t == 0);
        k.if_then(t == 0 || first + first + 1 != p_.blocks, [&] { run(head_of_sequence, block, u, body); });
      });
    };
    if (!s_.persistent) return unit();
    Reg step = k.sreg(SReg::nctaid_x);
    k.while_loop([&] { return u < p_.items; },
                 [&] {
                   unit();
                   k.add(u, u, step);
                 });
  }

 private:
  // Block `block` of head_of_sequence (batch · heads + head)'s body, where
  // the block has query rows.
  void run(const Reg& head_of_sequence, const Reg& block, const Reg& unit,
           const std::function<void(const tile::WorkItem&)>& body) const {
    Kernel& k = k_;
    Reg b = k.div(head_of_sequence, p_.heads);
    Reg head = head_of_sequence - b * p_.heads;
    const Extent qs = sequence_extent(k, s_.varlen, p_.cu_q, b, p_.seq_q),
                 ks = sequence_extent(k, s_.varlen, p_.cu_k, b, p_.seq_k);
    // A head's ragged block (rows not a multiple of block_m) is its first:
    // its rows before 0, of no query, are computed (TMA reads them as
    // zeros) and not stored. Under a causal mask the first block sees the
    // fewest keys, so those rows cost least there (last, the longest block
    // would carry them: d64 1k causal on 192-row blocks 3904 key blocks'
    // rows of 192 where 3264 suffice).
    Reg ragged = (k.div(qs.length + (s_.block_m() - 1), s_.block_m()) * s_.block_m() - qs.length).as(s32);
    Reg m0 = (block * s_.block_m()).as(s32) - ragged;
    Reg row0 = k.max(m0, 0);  // the block's first row of a query
    Reg d = mask_diagonal(k, s_.top_left, qs.length, ks.length);
    const MaskGeometry mask{.len_k = ks.length,
                            .diag = d,
                            .left = s_.window_left,
                            .right = s_.window_right,
                            .window_left = p_.window_left,
                            .window_right = p_.window_right};
    const KeyBlocks blocks = key_blocks(k, mask, row0, k.min(qs.length, m0 + s_.block_m()) - row0, s_.block_n);
    // Rows that see no key still take one block, block 0 (in the tensor,
    // and wholly masked for them: their P is 0, O 0 and the log-sum-exp
    // -inf), so that every item runs the one stream of blocks.
    Pred none = blocks.hi <= blocks.lo;
    tile::WorkItem item;
    item.tile = {m0.as(u32), head, b, unit};
    item.kb0 = k.selp(0, blocks.lo, none);
    item.kb1 = k.selp(1, blocks.hi, none);
    item.extra = {qs.length, ks.length, qs.first.as(u32), ks.first.as(u32), d};
    k.if_then(m0 < qs.length, [&] { body(item); });
  }

  Kernel& k_;
  Sm90aAttentionSpec s_;
  Params p_;
};

class Forward final : public tile::WarpSpecializedDesign {
 public:
  explicit Forward(const Sm90aAttentionSpec& s) : s_(s), m_(smem_of(s)), k_(s.kernel_name(), Target::sm_90a) {}

  Kernel& kernel() override { return k_; }

  // Every consumer warpgroup on each item, 64 rows each.
  tile::WarpSpecializedConfig config() const override {
    return sm90a_attention_config(s_.stages, m_.full, m_.empty, s_.stage_bytes(), s_.consumers);
  }

  void params(tile::WarpSpecialized&) override {
    map_q_p_ = k_.param_bytes("map_q", 128, 64);
    map_k_p_ = k_.param_bytes("map_k", 128, 64);
    map_v_p_ = k_.param_bytes("map_v", 128, 64);
    o_ = k_.param_ptr("O");
    lse_ = k_.param_ptr("lse");
    cu_q_ = k_.param_ptr("cu_seqlens_q");
    cu_k_ = k_.param_ptr("cu_seqlens_k");
    seq_q_ = k_.param(u32, "seq_q");
    seq_k_ = k_.param(u32, "seq_k");
    group_ = k_.param(u32, "group");
    for (const char* n : {"o_batch", "o_head", "o_row"}) so_.push_back(k_.param(u64, n));
    for (const char* n : {"lse_batch", "lse_head", "lse_row"}) slse_.push_back(k_.param(u64, n));
    scale_log2_ = k_.param(f32, "scale_log2");
    window_left_ = k_.param(s32, "window_left");
    window_right_ = k_.param(s32, "window_right");
    items_ = k_.param(u32, "items");
    blocks_ = k_.param(u32, "blocks");
    heads_ = k_.param(u32, "heads");
  }

  void prologue(tile::WarpSpecialized& ws) override {
    base_ = ws.smem_base();
    map_q_ = k_.param_generic_address(map_q_p_);
    map_k_ = k_.param_generic_address(map_k_p_);
    map_v_ = k_.param_generic_address(map_v_p_);
    q_full_.emplace(k_, base_, m_.q_full, s_.q_buffers());
    q_empty_.emplace(k_, base_, m_.q_empty, s_.q_buffers());
    v_pipe_.emplace(ws.mbarriers(m_.v_full, s_.stages), ws.mbarriers(m_.v_empty, s_.stages));
    order_.emplace(ws.warpgroup_barriers(256));
    q_items_ = k_.mov(u32, 0);  // the items whose Q this thread's role loaded (producer) or read (consumers)
  }

  void initialize(tile::WarpSpecialized&) override {
    for (const Reg& map : {map_q_, map_k_, map_v_}) k_.prefetch_tensormap(map);
    for (int b = 0; b < s_.q_buffers(); ++b) {
      q_full_->init(b, 1);
      q_empty_->init(b, 4 * s_.consumers);  // each consumer warp, once its rows of the item's O left the buffer (store)
    }
    v_pipe_->init(1, s_.consumers);  // as the template's ring of K: the producer's expect_tx, each warpgroup's leader
  }

  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized&) override {
    return std::make_unique<QueryBlocks>(
        k_, s_,
        QueryBlocks::Params{cu_q_, cu_k_, seq_q_, seq_k_, window_left_, window_right_, items_, blocks_, heads_});
  }

  // Producer: Q once per item, into the buffer the consumers freed of the
  // previous item's Q, then K and V of each key block, head_dim/64 panels each, K
  // into the template's ring, V into the design's (its slot of the same
  // index and phase: the two rings turn in step).
  void load_item(const tile::WorkItem& w) override {
    const QSlot q = q_slot();
    k_.if_then(q.use > 0, [&] { q_empty_->wait(q.buffer, (q.use + 1) & 1); });
    k_.add(q_items_, q_items_, 1);
    q_full_->expect_tx(q.buffer, s_.q_bytes());
    Reg row = w.extra[QueryBlocks::q_first] + w.tile.m0;
    Reg full = q_full_->address(q.buffer);
    for (int p = 0; p < s_.head_dim / 64; ++p)
      k_.tma_load(at(base_ + m_.q + q.buffer * s_.q_bytes() + p * s_.block_m() * kRow), map_q_,
                  {p * 64, row, w.tile.n0, batch_coordinate(w)}, at(full));
  }

  void load(const tile::LoadStep& s) override {
    Reg slot = s.state.stage() * s_.stage_bytes();
    Reg row = w_k_first(s.item) + s.kb.as(u32) * s_.block_n;
    Reg kv_head = k_.div(s.item.tile.n0, group_);
    auto panels = [&](std::uint32_t ring, const Reg& map, const Reg& full) {
      for (int p = 0; p < s_.head_dim / 64; ++p)
        k_.tma_load(at(base_ + ring + slot + static_cast<std::uint32_t>(p) * s_.block_n * kRow), map,
                    {p * 64, row, kv_head, batch_coordinate(s.item)}, at(full));
    };
    panels(m_.k, map_k_, s.full);
    Reg v_full = v_pipe_->full_barrier(s.state);
    v_pipe_->acquire(s.state);
    v_pipe_->expect_tx(v_full, s_.stage_bytes());
    panels(m_.v, map_v_, v_full);
  }

  void consumer_setup(tile::WarpSpecialized& ws) override {
    wg_ = ws.warpgroup();
    lane_ = k_.sreg(SReg::laneid);
    warp_rows_ = wg_ * 64 + ((ws.tid() >> 5) & 3) * 16;  // the warp's first row of the item's 128
    s_tile_.emplace(c_tile(k_, 16, s_.block_n, "s"));
    o_tile_.emplace(c_tile(k_, 16, s_.head_dim, "o"));
    for (int i = 0; i < s_.block_n / 16; ++i) p_.push_back(a_tile(k_, 16, 16, s_.dtype == DType::f16 ? f16 : bf16, "p" + std::to_string(i) + "_"));
    lc_ = tile::emit_lane_coords(k_, s_tile_->steps(), lane_);
    // Q and K are K-major panels of 128-byte rows (8-row atoms: SBO one
    // atom, LBO unused); V is read N-major (its rows are keys: wgmma's K),
    // 64-column panels block_n rows tall (LBO: the next panel along N).
    q_desc_ = tile::warpgroup::smem_descriptor(k_, base_ + m_.q + wg_ * (64 * kRow), 16, kAtom);
    q_item_desc_ = k_.reg(u64);
    k_desc_ = tile::warpgroup::smem_descriptor(k_, base_ + m_.k, 16, kAtom);
    v_desc_ = tile::warpgroup::smem_descriptor(k_, base_ + m_.v, s_.block_n * kRow, kAtom);
    if (s_.persistent)  // V's shape fits in Q's buffer (mainloop)
      q_as_v_ = tile::warpgroup::smem_descriptor(k_, base_ + m_.q, s_.block_n * kRow, kAtom);
    v_state_.emplace(k_, s_.stages);
    softmax_.emplace(k_, scale_log2_);
    always_ = k_.setp(Cmp::eq, scale_log2_, scale_log2_);  // check_support refuses a scale that is not finite
    finished_ = OnlineSoftmax::Result{k_.regs(f32, 2, "inv_l"), k_.regs(f32, 2, "lse_log2_")};
    pending_ = k_.mov(u32, 0);  // whether an item's last P·V and epilogue are still to run
    pending_rows_ = {k_.reg(u32), k_.reg(u32), k_.reg(u32), k_.reg(u32), k_.reg(s32)};
    item_buffer_ = k_.reg(u32);
    pending_buffer_ = k_.reg(u32);
  }

  // The item's key blocks (one at least), with FA3's two overlaps. Between
  // the consumer warpgroups (ping-pong): each issues its products in its
  // turn, ordered by the named barriers (a ring: 0, 1, .., 0), so one's
  // softmax runs under the others' products. Within a warpgroup: block j's S = Q·Kᵀ and block
  // j-1's O += P·V are issued together, and block j's softmax runs while
  // that P·V does; O is rescaled (and P rewritten) only once it has
  // completed (wgmma groups complete in order: PTX ISA 9.7.15.6.2). Across
  // items alike: the previous item's last P·V is issued with this item's
  // first S and completes under its softmax, then the previous item's rows
  // are stored (its epilogue), so that a CTA's items run as one stream of
  // blocks with no drained pipeline between them. K's slot of block j is
  // freed once its S completed, V's of block j-1 after its P·V (FA3's
  // separate K and V pipelines: K's next load starts a block earlier than
  // a shared K-and-V slot's would), Q's buffer after the last block's S.
  // `state` walks K's ring, v_state_ V's a block behind.
  void mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& state) override {
    const tile::MbarrierPipeline& pipe = ws.pipeline();
    const Pred& lead = ws.leader();
    Reg count = w.kb1 - w.kb0;
    const QSlot q = q_slot();
    q_full_->wait(q.buffer, q.use & 1);
    k_.add(q_items_, q_items_, 1);
    k_.mov(item_buffer_, q.buffer);
    Reg q_offset = k_.reg(u64);  // the item's Q buffer, in the descriptors' 16-byte units
    k_.cvt(q_offset, q.buffer * (s_.q_bytes() >> 4));
    k_.add(q_item_desc_, q_desc_, q_offset);
    Pred pending = pending_ != 0;
    // Once block kb's S completed: its K slot free.
    auto scores_done = [&] {
      k_.if_then(lead, [&] { pipe.release(state.stage()); });
      ++state;
    };
    const int last = s_.consumers - 1;
    Reg next = k_.selp(0, wg_ + 1, wg_ == last);  // the warpgroup whose turn follows this one's
    // The last warpgroup lets warpgroup 0 go first on a CTA's first item;
    // then each issues once the one before it in the ring has issued,
    // across items alike (so that warpgroup 0 takes an item's first turn
    // once the last issued its last turn of the item before, not once it
    // finished that item's softmax); warpgroup 0 takes the last one's final
    // arrival at the end (consumer_teardown).
    k_.if_then(wg_ == last && !pending, [&] { order_->of(next).arrive(); });
    // S of the block in `state` and the P·V before it (on B descriptor
    // *v; null: none, the group empty; onto O where `accumulate` holds, else
    // into it), two commit groups; V's slot waited for where values_if
    // holds (null: always).
    auto turn = [&](const Pred* values_if, const Reg* v, const std::variant<bool, PredUse>& accumulate) {
      pipe.wait(state);
      if (values_if)
        k_.if_then(*values_if, [&] { v_pipe_->wait(*v_state_); });
      else
        v_pipe_->wait(*v_state_);
      order_->of(wg_).sync();
      k_.wgmma_fence();  // P and O were written by ordinary instructions
      issue_scores(state.stage());
      k_.wgmma_commit_group();
      if (v) issue_pv_from(*v, accumulate);
      k_.wgmma_commit_group();
      order_->of(next).arrive();
    };
    // Where no item is pending (a persistent CTA's first) the first P·V
    // still runs (a wgmma under a branch is serialized by ptxas: C7520), on
    // Q's buffer (loaded, and freed only once this P·V completed) in place
    // of a V slot, into an O that the item's first P·V (block 1's turn)
    // overwrites. A CTA of one item has none pending.
    std::optional<Reg> first_v;
    if (s_.persistent) first_v = k_.selp(v_slot(v_state_->stage()), q_as_v_ + q_offset, pending);
    turn(&pending, first_v ? &*first_v : nullptr, true);
    k_.if_then(pending, [&] { softmax_->finish(k_, *finished_); });
    softmax_->reset(k_);
    k_.wgmma_wait_group(1);  // S
    scores_done();
    own_block([&] { scores_to_p(w, w.kb0); });
    k_.wgmma_wait_group(0);  // the previous item's last P·V
    pack_accumulator_as_a(k_, *s_tile_, p_);  // first: S's registers free for the store
    k_.if_then(pending, [&] {
      values_done(lead);
      store(pending_rows_, pending_buffer_);
    });
    // O: the item's first P·V writes it without reading it (block 1's
    // turn); an item of one block adds its only P·V onto a zeroed O.
    k_.if_then(count == 1, [&] {
      for (const Reg& r : o_tile_->regs()) k_.mov(r, imm_f32(0.0f));
    });
    k_.for_range(1, count, 1, [&](Reg kb) {
      const Reg v = v_slot(v_state_->stage());
      turn(nullptr, &v, kb != 1);
      k_.wgmma_wait_group(1);  // S
      scores_done();
      Regs alpha;
      own_block([&] { alpha = scores_to_p(w, w.kb0 + kb); });
      k_.wgmma_wait_group(0);  // block kb-1's P·V
      values_done(lead);
      OnlineSoftmax::rescale(k_, {*o_tile_}, alpha);
      pack_accumulator_as_a(k_, *s_tile_, p_);
    });
  }

  // The item's last P·V is still to issue: its epilogue runs under the next
  // item's first block (mainloop) or at the end (consumer_teardown).
  void finish(const tile::WorkItem& w) override {
    k_.mov(pending_, 1);
    k_.mov(pending_buffer_, item_buffer_);
    const Rows rows = rows_of(w);
    k_.mov(pending_rows_.m0, rows.m0);
    k_.mov(pending_rows_.head, rows.head);
    k_.mov(pending_rows_.batch, rows.batch);
    k_.mov(pending_rows_.q_first, rows.q_first);
    k_.mov(pending_rows_.len_q, rows.len_q);
  }

  // Where the CTA ran an item: warpgroup 0 takes the last warpgroup's
  // arrival after its last turn (mainloop), then the last item's P·V and epilogue.
  void consumer_teardown(tile::WarpSpecialized& ws) override {
    k_.if_then(pending_ != 0 && wg_ == 0, [&] { order_->of(wg_).sync(); });
    flush(ws.leader());
  }

  // The rows an epilogue stores: the item's first query row, head,
  // sequence, the sequence's first row in the tensors and its length.
  struct Rows {
    Reg m0, head, batch, q_first, len_q;
  };
  static Rows rows_of(const tile::WorkItem& w) {
    return {w.tile.m0, w.tile.n0, w.tile.batch, w.extra[QueryBlocks::q_first], w.extra[QueryBlocks::len_q]};
  }

  // V's slot of the block whose P·V completed freed, V's walk one on.
  void values_done(const Pred& lead) {
    k_.if_then(lead, [&] { v_pipe_->release(v_state_->stage()); });
    ++*v_state_;
  }

  // The pending item's last P·V alone, then its epilogue.
  void flush(const Pred& lead) {
    k_.if_then(pending_ != 0, [&] {
      v_pipe_->wait(*v_state_);
      k_.wgmma_fence();
      issue_pv_from(v_slot(v_state_->stage()), true);
      k_.wgmma_commit_group();
      k_.wgmma_wait_group(0);
      values_done(lead);
      softmax_->finish(k_, *finished_);
      store(pending_rows_, pending_buffer_);
      k_.mov(pending_, 0);
    });
  }

  // S = Q·Kᵀ of the block in `stage` (uncommitted).
  void issue_scores(const Reg& stage) {
    Reg stage_offset = k_.reg(u64);
    k_.cvt(stage_offset, stage * (s_.stage_bytes() >> 4));
    const Type in = s_.dtype == DType::f16 ? f16 : bf16;
    for (int j = 0; j < s_.head_dim / 16; ++j) {
      const std::uint32_t q_off = (j / 4) * s_.block_m() * kRow + (j % 4) * 32, k_off = (j / 4) * s_.block_n * kRow + (j % 4) * 32;
      k_.wgmma_mma_async(in, s_tile_->regs(), q_item_desc_ + (q_off >> 4), k_desc_ + stage_offset + (k_off >> 4), j > 0,
                         WgmmaMajor::k, WgmmaMajor::k);
    }
  }

  // V's slot `stage` as wgmma's B descriptor.
  Reg v_slot(const Reg& stage) {
    Reg stage_offset = k_.reg(u64);
    k_.cvt(stage_offset, stage * (s_.stage_bytes() >> 4));
    return v_desc_ + stage_offset;
  }
  // O += P·V of V's slot at descriptor `v` (uncommitted), or O = P·V where
  // `accumulate` does not hold (the first wgmma's scale-d; PTX ISA
  // 9.7.15.5.2).
  void issue_pv_from(const Reg& v, const std::variant<bool, PredUse>& accumulate) {
    const Type in = s_.dtype == DType::f16 ? f16 : bf16;
    for (int kk = 0; kk < s_.block_n / 16; ++kk)
      k_.wgmma_mma_async(in, in, o_tile_->regs(), p_[kk].regs(), v + (kk * 16 * kRow >> 4),
                         kk == 0 ? accumulate : std::variant<bool, PredUse>(true), WgmmaMajor::mn);
  }

  // `body` as a basic block of its own (a branch on a predicate that always
  // holds): the softmax between the waits for S and for P·V, so that it
  // runs while P·V does. In one basic block with the wait for P·V, ptxas's
  // scheduler hoists that wait (WARPGROUP.DEPBAR.LE gsb0, 0x0) above the
  // softmax (nvdisasm: all 66 MUFU.EX2 of d128's block after it), and the
  // softmax waits for the P·V it should overlap.
  void own_block(const std::function<void()>& body) { k_.if_then(always_, body); }

  // Key block `block`'s scores (S, complete) masked where the mask cuts the
  // block, then taken into the online softmax: S becomes P (f32, in place);
  // returns the rescale factors of O's row halves.
  Regs scores_to_p(const tile::WorkItem& w, const Reg& block) {
    const MaskGeometry mask{.keys_are_rows = false,
                            .query0 = (w.tile.m0 + warp_rows_ + lc_.row).as(s32),
                            .key0 = (block * s_.block_n).as(s32) + lc_.col.as(s32),
                            .len_k = w.extra[QueryBlocks::len_k],
                            .diag = w.extra[QueryBlocks::diag],
                            .left = s_.window_left,
                            .right = s_.window_right,
                            .window_left = window_left_,
                            .window_right = window_right_};
    k_.if_then(mask_cuts(mask, w.tile.m0.as(s32), s_.block_m(), (block * s_.block_n).as(s32), s_.block_n),
               [&] { apply_mask(k_, *s_tile_, mask); });
    return softmax_->update_scores(k_, *s_tile_);
  }

  // O / l and the log-sum-exp (natural units) of the warp's rows that exist
  // (O complete, its softmax finished into finished_). O goes out through
  // the item's Q buffer `buffer` (its S all complete): stmatrix puts the
  // warp's 16 rows where its rows of Q were (the panels' 128-byte swizzle),
  // then each lane moves 16-byte pieces of whole rows to global memory, two
  // rows of 256 bytes a store at head_dim 128 (4-byte stores straight from
  // the fragments queued at the LSU: ncu, 7% of the d128 1k warps' samples
  // in "lg" throttle). The warp then frees its part of the buffer (q_empty).
  void store(const Rows& w, const Reg& buffer) {
    const OnlineSoftmax::Result& r = *finished_;
    const auto half = row_halves(*o_tile_);
    const Type out = s_.dtype == DType::f16 ? f16x2 : bf16x2;
    // packed[h][c]: row half h, 8-column chunk c of the thread's fragment.
    std::vector<std::vector<Reg>> packed(2, std::vector<Reg>(static_cast<std::size_t>(s_.head_dim / 8)));
    for (std::size_t v = 0; v + 1 < half.size(); v += 2) {
      const auto chunk = o_tile_->steps().value_offset(static_cast<std::int64_t>(v)).second / 8;
      Reg x0 = k_.reg(f32), x1 = k_.reg(f32), pair = k_.reg(b32);
      k_.mul(x0, o_tile_->regs()[v], r.inverse[half[v]]);
      k_.mul(x1, o_tile_->regs()[v + 1], r.inverse[half[v]]);
      k_.cvt_pack(out, pair, x1, x0);
      packed[static_cast<std::size_t>(half[v])][static_cast<std::size_t>(chunk)] = pair;
    }
    const std::uint32_t panel_bytes = static_cast<std::uint32_t>(s_.block_m()) * kRow;
    Reg staging = base_ + m_.q + buffer * s_.q_bytes() + warp_rows_ * kRow;
    // Matrix q = lane / 8 of each stmatrix.x4: rows 8·(q % 2).. of chunk 2g + q / 2 (PTX ISA 9.7.14.5.16).
    Reg row_in_matrix = lane_ & 7;
    Reg lane_row = ((lane_ >> 3) & 1) * 8 + row_in_matrix;
    Reg lane_chunk = lane_ >> 4;
    for (int g = 0; g < s_.head_dim / 16; ++g) {
      Reg chunk = lane_chunk + 2 * g;
      Reg at_row = staging + static_cast<std::uint32_t>(g / 4) * panel_bytes + lane_row * kRow;
      k_.stmatrix(at(at_row + tile::swizzled_chunk(k_, kSwizzle128, chunk, row_in_matrix)),
                  {packed[0][2 * g], packed[1][2 * g], packed[0][2 * g + 1], packed[1][2 * g + 1]});
    }
    k_.bar_warp_sync();
    // Lane l moves chunk l % (head_dim / 8) of rows l / (head_dim / 8) + t·32 / (head_dim / 8).
    const int chunks = s_.head_dim / 8, rows_a_pass = 32 / chunks, chunk_bits = std::countr_zero(static_cast<unsigned>(chunks));
    // The warp's rows from rows_from on are the sequence's (a ragged first
    // block's rows before 0 are not): addresses from the warp's first row
    // of the sequence, `first` (the tensors' indices are unsigned).
    Reg rows_valid = w.len_q - (w.m0 + warp_rows_).as(s32);
    Reg rows_from = k_.mov(s32, 0) - (w.m0 + warp_rows_).as(s32);
    Reg skipped = k_.max(rows_from, 0).as(u32);
    Reg first = w.q_first + w.m0 + warp_rows_ + skipped;
    Reg o_row_bytes = k_.reg(u64);
    k_.shl(o_row_bytes, so_[2], 1);
    Reg row0 = element_address(k_, o_, element_offset(k_, w.batch, so_[0], w.head, so_[1], first, so_[2]), 2);
    Reg chunk = lane_ & (chunks - 1);
    Reg chunk_bytes = k_.reg(u64);
    k_.cvt(chunk_bytes, chunk * 16);
    Reg from_panel = staging + (chunk >> 3) * panel_bytes;
    for (int t = 0; t < 16 / rows_a_pass; ++t) {
      Reg row = (lane_ >> chunk_bits) + t * rows_a_pass;
      Regs piece = k_.regs(b32, 4);
      k_.ld(Space::shared, b32, piece, at(from_panel + row * kRow + tile::swizzled_chunk(k_, kSwizzle128, chunk, row & 7)));
      Reg row_offset = k_.reg(u64);
      k_.mul_wide(row_offset, row - skipped, 1);
      k_.mul(row_offset, row_offset, o_row_bytes);
      // The address outside the guard: a register written only under a
      // predicate keeps its old value live around the persistent loop.
      Reg address = row0 + row_offset + chunk_bytes;
      k_.guarded(row.as(s32) < rows_valid && row.as(s32) >= rows_from,
                 [&] { k_.st(Space::global, b32, at(address), piece); });
    }
    // The next item's Q arrives there by TMA (the async proxy) after this
    // warp's ordinary writes and reads: a proxy fence before the hand-back
    // (PTX ISA 9.7.13.4, membar/fence .proxy.async).
    k_.fence_proxy_async_shared();
    k_.bar_warp_sync();
    k_.if_then(lane_ == 0, [&] { q_empty_->arrive(buffer); });
    if (s_.has_lse) {
      Reg lse_row_bytes = k_.reg(u64);
      k_.shl(lse_row_bytes, slse_[2], 2);
      Regs lse = k_.regs(f32, 2);
      for (int h = 0; h < 2; ++h) k_.mul(lse[h], r.lse_log2[h], imm_f32(static_cast<float>(std::log(2.0))));
      store_row_values(k_, lse,
                       element_address(k_, lse_, element_offset(k_, w.batch, slse_[0], w.head, slse_[1], first, slse_[2]), 4),
                       lse_row_bytes, rows_valid, lane_, &rows_from);
    }
  }

 private:
  // The Q buffer of this role's next item and how many times it was used before.
  struct QSlot {
    Reg buffer, use;
  };
  QSlot q_slot() {
    if (s_.q_buffers() == 1) return {k_.mov(u32, 0), q_items_};
    return {q_items_ & 1, q_items_ >> 1};
  }
  // Varlen maps have one batch (the rows run on across sequences).
  Reg batch_coordinate(const tile::WorkItem& w) { return s_.varlen ? k_.mov(u32, 0) : w.tile.batch; }
  const Reg& w_k_first(const tile::WorkItem& w) const { return w.extra[QueryBlocks::k_first]; }

  Sm90aAttentionSpec s_;
  Smem m_;
  Kernel k_;
  ParamRef map_q_p_, map_k_p_, map_v_p_;
  Reg map_q_, map_k_, map_v_, o_, lse_, cu_q_, cu_k_, seq_q_, seq_k_, group_, scale_log2_, window_left_, window_right_;
  Reg items_, blocks_, heads_;
  std::vector<Reg> so_, slse_;
  Reg base_, q_items_;
  std::optional<tile::MbarrierArray> q_full_, q_empty_;
  std::optional<tile::NamedBarrierSet> order_;
  std::optional<tile::MbarrierPipeline> v_pipe_;  // V's ring
  // The consumers'.
  Reg wg_, lane_, warp_rows_, q_desc_, q_item_desc_, k_desc_, v_desc_, q_as_v_;
  Pred always_;  // true (own_block)
  std::optional<tile::RegisterTile> s_tile_, o_tile_;
  std::vector<tile::RegisterTile> p_;
  std::optional<OnlineSoftmax> softmax_;
  std::optional<OnlineSoftmax::Result> finished_;  // 1/l and the log-sum-exp of the rows an epilogue stores
  std::optional<tile::PipelineState> v_state_;
  Reg pending_;
  Rows pending_rows_;
  Reg item_buffer_, pending_buffer_;  // the Q buffers of this item and of the pending one
  tile::LaneCoords lc_;
};

}  // namespace

std::uint32_t Sm90aAttentionSpec::shared_bytes() const { return smem_of(*this).launch; }

std::string Sm90aAttentionSpec::kernel_name() const {
  return "warpforge_attention_fwd_sm90a_" + std::string(runtime::name(dtype)) + "_d" + std::to_string(head_dim) +
         "_" + std::to_string(block_m()) + "x" + std::to_string(block_n) + "s" + std::to_string(stages) + (persistent ? "_p" : "") + (paired ? "2" : "") +
         (varlen ? "_varlen" : "") +
         (has_lse ? "_lse" : "") + (window_left ? "_wl" : "") + (window_right ? "_wr" : "") + (top_left ? "_tl" : "");
}

Sm90aAttentionSpec sm90a_attention_spec(const AttentionProblem& p) {
  Sm90aAttentionSpec s;
  s.dtype = p.dtype;
  s.head_dim = static_cast<int>(p.head_dim);
  s.has_lse = p.has_lse;
  take_mask_flags(s, p);
  // Persistent where a fixed stride shares the work out evenly (one length:
  // not varlen; under a mask, pairs of blocks) and the loop's
  // registers fit (head_dim 256's O takes 128 of a consumer thread's 240: it
  // spills).
  s.persistent = !s.varlen && s.head_dim != 256;
  s.paired = s.persistent && (s.window_left || s.window_right);
  // Consumers: three at head_dim 64 (FA3's 192-row tile): the ncu profile
  // of two at d64 8k showed each warp's softmax chain the bound (an issue
  // every 5 cycles, a third of the stall samples dependency waits, the
  // tensor pipe 48% busy): a third warp a scheduler with a chain of its
  // own (H200, C++, against two: 8k 528.5 / 457.0 TFLOP/s, causal 446.5 /
  // 422.2; ncu 8k tensor pipe 56%). Its 160 registers a thread hold O (32),
  // S (64) and P (32) at 128-key blocks, not at 176. A head's ragged block
  // of 192 rows computes rows for no query: three unless that computes more
  // rows than 128-row blocks would by over an eighth (1k, 1152 rows for
  // 1024, ran 386.8 on three against 361.0 on two; causal 1k 248.2 against
  // 270.5 while the ragged block was a head's last, the longest: it is now
  // the first, QueryBlocks).
  if (p.head_dim == 64) {
    const std::int64_t rows3 = (p.seq_q + 191) / 192 * 192, rows2 = (p.seq_q + 127) / 128 * 128;
    s.consumers = (rows3 - rows2) * 8 <= rows2 ? 3 : 2;
  }
  // Registers a consumer thread holds: O head_dim/2, S block_n/2, P
  // block_n/4; head_dim 256 takes 80-key blocks to stay within 240 (FA3's
  // tile). Shared memory: Q block_m() x head_dim (two buffers when persistent)
  // and K's and V's rings, a slot of K free once its S completed, of V once
  // its P·V did (two slots of each keep a load about two blocks ahead: d256
  // 8k 521 -> 734 TFLOP/s on an H200 against one ring of two K-and-V slots);
  // three where they fit: d64 2 x 24 + 2 x 3 x 16 KB (three consumers;
  // two: 2 x 16 + 2 x 3 x 22, 176 keys); d128 2 x 32 + 2 x 2 x 32 (persistent) or 32 + 2 x 3 x 32; d256
  // 64 + 2 x 2 x 40.
  // d64 without a mask: 176 keys a block (H200, C++ d64 8k 434 -> 460
  // TFLOP/s against 128; 1k alike; under a mask 128: causal 1k 282 against
  // 253 at 176, the diagonal's blocks wider).
  s.block_n = p.head_dim == 256                                                 ? 80
              : p.head_dim == 64 && s.consumers == 2 && s.persistent && !s.paired ? 176
                                                                                  : 128;
  s.stages = p.head_dim == 256 || (p.head_dim == 128 && s.persistent) ? 2 : 3;
  return s;
}

ptx::Module build_sm90a_attention_forward(const Sm90aAttentionSpec& spec) {
  Forward design(spec);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
