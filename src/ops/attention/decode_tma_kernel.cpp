#include "decode_tma_kernel.hpp"

#include <bit>
#include <memory>
#include <optional>

#include "decode_warps.hpp"
#include "sm90a_design.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/warp_specialized.hpp"

namespace warpforge::ops {

using namespace dsl;
using attention_sm80::PanelTile;

namespace {

int log2_of(int x) { return std::countr_zero(static_cast<unsigned>(x)); }

// Where the design's buffers sit in shared memory (tile::SharedLayout): Q,
// the ring (each slot K's copies, then V's), the full and empty barriers.
struct Smem {
  std::uint32_t q, ring, full, empty, launch;
};
Smem smem_of(const DecodeSpec& s) {
  tile::SharedLayout layout;
  Smem m{};
  m.q = layout.buffer(static_cast<std::uint32_t>(s.row_tiles() * 16 * s.head_dim * 2),
                      tile::SharedLayout::kBaseAlignment);
  m.ring = layout.ring(s.stage_bytes(), s.stages);
  m.full = layout.mbarriers(s.stages);
  m.empty = layout.mbarriers(s.stages);
  m.launch = layout.launch_bytes();
  return m;
}

// One item a CTA: the split's keys, from the sequence's kv_len (loaded in
// the prologue); its blocks are the item's k-blocks (a split past the
// sequence has none, and still writes its empty partial for the combine).
class SplitItem final : public OneItemPerCta {
 public:
  SplitItem(Kernel& k, const DecodeSpec& s, const decode::Params& p, const Reg& kv_len, decode::SplitKeys& keys)
      : OneItemPerCta(k, "attention decode's SplitItem") {
    Reg split = k.sreg(SReg::ctaid_x), g = k.sreg(SReg::ctaid_y), b = k.sreg(SReg::ctaid_z);
    keys = decode::split_keys(k, s, p, kv_len, split);
    item_.tile = {k.mov(u32, 0), g, b, split};
    item_.kb0 = k.mov(s32, 0);
    item_.kb1 = keys.blocks;
    valid_ = k.setp(Cmp::eq, split, split);
  }
};

class Decode final : public tile::WarpSpecializedDesign {
 public:
  explicit Decode(const DecodeSpec& s) : s_(s), m_(smem_of(s)), k_(s.kernel_name(), Target::sm_90a) {}

  Kernel& kernel() override { return k_; }

  // One consumer warpgroup (the four computing warps), the producer
  // warpgroup's first warp loading; every consumer thread frees a slot.
  tile::WarpSpecializedConfig config() const override {
    tile::WarpSpecializedConfig c;
    c.consumers = 1;
    c.stages = s_.stages;
    c.full_barriers = m_.full;
    c.empty_barriers = m_.empty;
    c.empty_arrivals = 128;
    c.stage_bytes = s_.stage_bytes();
    c.producer_registers = 40;
    c.consumer_registers = 232;
    c.dependent_launch = false;
    return c;
  }

  void params(tile::WarpSpecialized&) override {
    p_ = decode::declare_params(k_);
    map_k_p_ = k_.param_bytes("map_k", 128, 64);
    map_v_p_ = k_.param_bytes("map_v", 128, 64);
  }

  // kv_len asked for first, and beside it (no sliding window: the split's
  // blocks start at split·block_n whatever kv_len is) the producer warp's
  // first window of block-table entries: both round trips run under the
  // barriers' set-up, and the first pages are known when kv_len is.
  void prologue(tile::WarpSpecialized& ws) override {
    Reg b4 = k_.reg(u64);
    k_.mul_wide(b4, k_.sreg(SReg::ctaid_z), 4);
    kv_len_ = k_.reg(s32);
    k_.ld(Space::global, s32, kv_len_, at(p_.lens + b4));
    table_base_ = k_.reg(u64);
    {
      Reg b64 = k_.reg(u64);
      k_.cvt(u64, u32, b64, k_.sreg(SReg::ctaid_z));
      k_.mul(b64, b64, p_.table_row);
      k_.mad(table_base_, b64, 4, p_.table);
    }
    first_window_ = k_.mov(u32, 0);
    if (!s_.window_left)
      k_.if_then((ws.tid() >> 5) == 4, [&] {
        load_window(first_window_, decode::first_block_key(k_, s_, k_.sreg(SReg::ctaid_x)),
                    (p_.splits * s_.block_n).as(s32), k_.mov(u32, 0), std::nullopt);
      });
    base_ = ws.smem_base();
    map_k_ = k_.param_generic_address(map_k_p_);
    map_v_ = k_.param_generic_address(map_v_p_);
    warps_barrier_.emplace(ws.named_barrier(128));
  }

  void initialize(tile::WarpSpecialized&) override {
    k_.prefetch_tensormap(map_k_);
    k_.prefetch_tensormap(map_v_);
  }

  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized&) override {
    return std::make_unique<SplitItem>(k_, s_, p_, kv_len_, keys_);
  }

  // The producer warpgroup's first warp: lane 0 expects each stage's bytes,
  // lanes 0 .. copies-1 each load one page's K and V of the block.
  void producer(tile::WarpSpecialized& ws) override {
    k_.if_then(ws.tid() < 128 + 32, [&] {
      ws.source().for_each([&](const tile::WorkItem& w) { load_blocks(ws, w); });
    });
  }

  // Q staged by the four warps, then its fragments.
  void consumer_setup(tile::WarpSpecialized& ws) override {
    const PanelTile sQ{base_ + m_.q, s_.row_tiles() * 16, s_.head_dim};
    decode::stage_q(k_, s_, p_, sQ, k_.sreg(SReg::ctaid_z), k_.sreg(SReg::ctaid_y), ws.tid());
    k_.cp_async_commit();
    k_.cp_async_wait_all();
    warps_barrier_->sync();
    warps_.emplace(k_, s_, p_, sQ, ws.tid());
  }

  void mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& state) override {
    const tile::MbarrierPipeline& pipe = ws.pipeline();
    const int D = s_.head_dim, BN = s_.block_n, R = s_.page_rows, KW = BN / s_.key_groups();
    // The warp's first key of a block: copy first / R, its row first % R.
    Reg first = warps_->key_group() * KW;
    Reg warp_offset = (first >> log2_of(R)) * (R * D * 2) + (first & (R - 1)) * (s_.panel_width() * 2);
    k_.for_range(0, w.kb1 - w.kb0, 1, [&](Reg kb) {
      pipe.wait(state);
      Reg key0 = keys_.key_of(k_, kb);
      Reg slot = base_ + m_.ring + state.stage() * s_.stage_bytes();
      k_.if_then(key0 + BN > keys_.key_end, [&] {
        zero_rows_past(slot + v_offset(), keys_.key_end - key0, ws.tid());
        warps_barrier_->sync();
      });
      Reg sk = slot + warp_offset;
      warps_->block(PanelTile{sk, R, D}, PanelTile{sk + v_offset(), R, D}, key0, keys_);
      pipe.release(state.stage());
      ++state;
    });
  }

  void finish(const tile::WorkItem&) override {
    // The ring is free once every warp has read its last block.
    warps_barrier_->sync();
    warps_->finish(base_ + m_.ring, base_ + m_.q, [&] { warps_barrier_->sync(); });
  }

 private:
  std::uint32_t v_offset() const { return static_cast<std::uint32_t>(s_.block_n * s_.head_dim * 2); }

  int copies() const { return s_.block_n / s_.page_rows; }

  // Lane l's entry of a window of `32 / copies` blocks of the split, the
  // window from block `index`·(32 / copies): the physical page of copy
  // l % copies of block index·W + l / copies, that block's first key
  // `first` + j·`step` (entries past the table's width, or with `blocks`
  // past the split's, not asked for; those past kv_len never used).
  void load_window(const Reg& dst, const Reg& first, const Reg& step, const Reg& index,
                   const std::optional<Reg>& blocks) {
    Kernel& k = k_;
    const int window = 32 / copies();
    Reg lane = k.sreg(SReg::laneid);
    Reg j = (index * window + (lane >> log2_of(copies()))).as(s32);
    Reg key = (first + j * step + ((lane & (copies() - 1)) * s_.page_rows).as(s32)).as(u32);
    Reg page = k.reg(u32);
    k.div(page, key, p_.page_size);
    Pred inside = page < p_.table_width;
    if (blocks) inside = inside && (j < *blocks);
    k.if_then(inside, [&] {
      Reg offset = k.reg(u64);
      k.mul_wide(offset, page, 4);
      k.ld(Space::global, u32, dst, at(table_base_ + offset), {.nc = true});
    });
  }

  void load_blocks(tile::WarpSpecialized& ws, const tile::WorkItem& w) {
    Kernel& k = k_;
    const tile::MbarrierPipeline& pipe = ws.pipeline();
    const int copies = this->copies(), window = 32 / copies;  // blocks a window of entries
    Reg lane = k.sreg(SReg::laneid);
    Reg copy = lane & (copies - 1);
    // The next window's entries load while this window's blocks are issued;
    // the first came with kv_len (the prologue) but under a sliding window.
    Reg current = k.mov(u32, 0), next = k.mov(u32, 0);
    if (s_.window_left) load_window(next, keys_.start, keys_.step, k.mov(u32, 0), w.kb1);
    else k.mov(next, first_window_);
    tile::PipelineState state(k, s_.stages);
    k.for_range(0, w.kb1, 1, [&](Reg j) {
      Reg in_window = j.as(u32) & (window - 1);
      k.if_then(in_window == 0, [&] {
        k.mov(current, next);
        load_window(next, keys_.start, keys_.step, (j.as(u32) >> log2_of(window)) + 1, w.kb1);
      });
      // A copy past the sequence's last key loads the page of that key again
      // (the stage's bytes stay fixed; the rows past it are masked and V's
      // zeroed), so no page past kv_len is touched.
      Reg key0 = keys_.key_of(k, j);
      Reg last_copy = ((keys_.key_end - 1 - key0) >> log2_of(s_.page_rows)).as(u32);
      Reg source = k.min(copy, last_copy);
      Reg physical = k.reg(u32);
      k.shfl_sync(Shfl::idx, physical, current, in_window * copies + source, 31);
      Reg full = pipe.full_barrier(state);
      pipe.acquire(state);
      k.if_then(lane == 0, [&] { pipe.expect_tx(full, s_.stage_bytes()); });
      k.bar_warp_sync();
      k.if_then(lane < copies, [&] {
        Reg in_page = k.reg(u32);
        k.rem(in_page, (key0 + (source * s_.page_rows).as(s32)).as(u32), p_.page_size);
        Reg dst = base_ + m_.ring + state.stage() * s_.stage_bytes() + copy * (s_.page_rows * s_.head_dim * 2);
        const std::vector<Src> coords = {k.mov(s32, 0), in_page, k.mov(s32, 0), w.tile.n0, physical};
        k.tma_load(at(dst), map_k_, coords, at(full));
        k.tma_load(at(dst + v_offset()), map_v_, coords, at(full));
      });
      ++state;
    });
  }

  // Rows [valid, block_n) of the slot's V set to zero by the four warps,
  // 16 bytes a store: each row of every panel whole (the swizzle moves
  // chunks within a row only).
  void zero_rows_past(const Reg& v, const Reg& valid, const Reg& tid) {
    Kernel& k = k_;
    const int BN = s_.block_n, R = s_.page_rows, D = s_.head_dim, W = s_.panel_width();
    const int chunks = W / 8, items = BN * (D / W) * chunks;  // 16-byte pieces
    Reg zero = k.mov(b32, 0);
    for (int i = 0; i < items; i += 128) {
      Reg item = tid + i;
      Reg chunk = item & (chunks - 1), row = (item >> log2_of(chunks)) & (BN - 1),
          panel = item >> log2_of(chunks * BN);
      k.if_then(row.as(s32) >= valid, [&] {
        Reg at_piece = v + (row >> log2_of(R)) * (R * D * 2) + panel * (R * W * 2) + (row & (R - 1)) * (W * 2) +
                       (chunk << 4);
        k.st(Space::shared, b32, at(at_piece), Regs{zero, zero, zero, zero});
      });
    }
  }

  DecodeSpec s_;
  Smem m_;
  Kernel k_;
  decode::Params p_;
  ParamRef map_k_p_, map_v_p_;
  Reg kv_len_, table_base_, first_window_, base_, map_k_, map_v_;
  std::optional<tile::NamedBarrier> warps_barrier_;
  decode::SplitKeys keys_;
  std::optional<decode::Warps> warps_;
};

}  // namespace

std::uint32_t decode_tma_shared_bytes(const DecodeSpec& spec) { return smem_of(spec).launch; }

ptx::Module build_decode_tma(const DecodeSpec& spec) {
  if (!spec.tma || spec.page_rows < 16 || spec.block_n % spec.page_rows != 0 ||
      spec.page_rows < spec.block_n / spec.key_groups())
    throw OpsError("build_decode_tma: " + spec.kernel_name() + ": page_rows " + std::to_string(spec.page_rows) +
                   " must be 16 or more, divide block_n and hold a warp's keys");
  Decode design(spec);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
