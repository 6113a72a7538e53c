#include "swapped_gemm_amax_kernel.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "block_codes.hpp"
#include "transposed_output.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"
#include "warpforge/tile/tile_scheduler.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {
namespace {

using namespace dsl;
using runtime::DType;

constexpr int kConsumers = 2;                 // warpgroups 0 and 1, 64 B rows each
constexpr std::uint32_t kScalePiece = 512;    // 128 rows x 4 scale blocks of the 128x4 layout
constexpr std::uint32_t kSwizzleAtom = 1024;  // 8 rows of 128 bytes: the 128-byte swizzle's repeat

bool fp4(const GemmAmaxProblem& p) { return p.ab_dtype == DType::e2m1; }
// Bytes of one B row's codes in a K block: 64 FP8 codes, or 64 E2M1 codes packed two a byte.
std::uint32_t code_row_bytes(const GemmAmaxProblem& p) { return fp4(p) ? kSwappedBlock / 2 : kSwappedBlock; }
// SFB's 512-byte pieces a stage: one a K block at vec 16; at vec 32 a
// piece covers two blocks (one piece for a single block).
std::uint32_t scale_pieces(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t) {
  return p.vec == 32 ? static_cast<std::uint32_t>(std::max(t.blocks / 2, 1)) : static_cast<std::uint32_t>(t.blocks);
}

bool clustered(const SwappedGemmAmaxTiling& t) { return t.cluster && t.splits > 1; }
// The accumulator tiles (4 floats) of a consumer thread: T/8.
std::size_t acc_tiles(const SwappedGemmAmaxTiling& t) { return static_cast<std::size_t>(t.tokens / 8); }

// One stage, from a 1024-byte boundary: A's bf16 tiles (a block's T rows
// of 128 bytes, swizzled; block j's at a_tile + j·a_bytes), B's codes
// (rows of b_row bytes, block j's codes j·code_row_bytes into each), SFB's
// pieces; stages 1024 bytes apart. A cluster's split-K slots overlay the
// stages once the main loop is over.
struct Layout {
  std::uint32_t a_tile, a_bytes, b_codes, b_row, scales, stage;  // offsets and sizes in a stage, its stride
  std::uint32_t full, empty, last, bytes;                         // barriers, split-K's flag, the request
};
Layout layout(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t) {
  Layout l{};
  const auto blocks = static_cast<std::uint32_t>(t.blocks);
  l.a_tile = 0;
  l.a_bytes = static_cast<std::uint32_t>(t.tokens) * 128;
  l.b_codes = blocks * l.a_bytes;
  l.b_row = blocks * code_row_bytes(p);
  l.scales = l.b_codes + kSwappedRows * l.b_row;
  l.stage = (l.scales + scale_pieces(p, t) * kScalePiece + kSwizzleAtom - 1) / kSwizzleAtom * kSwizzleAtom;
  std::uint32_t ring = static_cast<std::uint32_t>(t.stages) * l.stage;
  if (clustered(t)) ring = std::max(ring, cluster_split_slot_bytes(t.splits, 4 * kConsumers, acc_tiles(t)));
  tile::SharedLayout s;
  s.buffer(ring, tile::SharedLayout::kBaseAlignment);  // the stages, stage s at s · stage
  l.full = s.mbarriers(t.stages);
  l.empty = s.mbarriers(t.stages);
  l.last = s.buffer(4, 4);
  l.bytes = s.launch_bytes();
  return l;
}

std::int64_t row_tiles(const GemmAmaxProblem& p) { return (p.n + kSwappedRows - 1) / kSwappedRows; }
std::int64_t token_tiles(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t) {
  return (p.m + t.tokens - 1) / t.tokens;
}

// The CTA's one output tile and K range: grid x is (tile, split), token
// tiles innermost, so the CTAs that stream the same B rows run side by side
// (their second reads hit L2). Not persistent: one item, no loop.
class SwappedTile final : public tile::WorkSource {
 public:
  SwappedTile(Kernel& k, const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t, std::int64_t per_split,
              std::int64_t kblocks) {
    Reg cta = k.sreg(SReg::ctaid_x);
    Reg split = k.reg(u32), unit = k.reg(u32);
    k.rem(split, cta, imm(t.splits));
    k.div(unit, cta, imm(t.splits));
    Reg token_tile = k.reg(u32), rest = k.reg(u32);
    k.rem(token_tile, unit, imm(token_tiles(p, t)));
    k.div(rest, unit, imm(token_tiles(p, t)));
    Reg row_tile = k.reg(u32), batch = k.reg(u32);
    k.rem(row_tile, rest, imm(row_tiles(p)));
    k.div(batch, rest, imm(row_tiles(p)));
    const tile::BlockRange ks = tile::split_range(k, split, imm(per_split), imm(kblocks));
    item_ = {{token_tile * imm(t.tokens), row_tile * imm(kSwappedRows), batch, unit}, ks.begin, ks.end,
             std::nullopt, split};
    if (clustered(t)) rank_ = tile::ClusterRank{split, k.mov(u32, 0u)};
  }
  void for_each(const std::function<void(const tile::WorkItem&)>& body, const Reg*, int) const override {
    body(item_);
  }
  // A cluster's CTAs are the tile's splits along M: rank = split.
  std::optional<tile::ClusterRank> cluster_rank() const override { return rank_; }
  const tile::WorkItem& item() const { return item_; }

 private:
  tile::WorkItem item_;
  std::optional<tile::ClusterRank> rank_;
};

// The kernel as a design of the warp-specialized template: the producer
// warpgroup's first thread loads the stages (B's codes and scales of the
// first ring before griddepcontrol.wait, their A tiles after it), the two
// consumer warpgroups convert B's codes into register fragments and run
// wgmma with A from shared memory, and finish stores Cᵀ (after the split-K
// reduction of transposed_output.hpp). The producer warpgroup gives back
// registers that the consumers' accumulators need (256 tokens: 128 a
// thread; PTX ISA 9.7.19.5, setmaxnreg). setmaxnreg.inc takes registers only
// from those the CTA's own warps gave back, so 128 x 40 + 256 x 232 must
// stay within 384 x 168 (ptxas's entry budget for 384 threads), which it
// meets exactly: with more, the consumers would wait forever once other
// CTAs fill the SM (seen on an H100 in a two-CTA trial).
class Swapped final : public tile::WarpSpecializedDesign {
 public:
  Swapped(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t)
      : p_(p), t_(t), l_(layout(p, t)), k_(kSwappedGemmAmaxKernel, Target::sm_90a), codes_(k_, p) {
    if (t.tokens < 8 || t.tokens > kSwappedMaxTokens || t.tokens % 8 != 0 || t.stages < 2 || t.stages > 32 ||
        (t.blocks != 1 && t.blocks != 2 && t.blocks != 4) || t.ctas_per_sm < 1 || t.ctas_per_sm > 2)
      throw OpsError("swapped gemm_amax kernel: tiling of " + std::to_string(t.tokens) + " tokens, " +
                     std::to_string(t.stages) + " stages of " + std::to_string(t.blocks) + " K blocks, " +
                     std::to_string(t.ctas_per_sm) + " CTAs an SM; it takes 8 to " +
                     std::to_string(kSwappedMaxTokens) +
                     " tokens (a multiple of 8), 2 to 32 stages, 1, 2 or 4 K blocks a stage and 1 or 2 CTAs an SM");
    if (p.k % kSwappedBlock != 0)
      throw OpsError("swapped gemm_amax kernel: problem " + p.describe() + "; it takes K a multiple of " +
                     std::to_string(kSwappedBlock));
    kblocks_ = p.k / kSwappedBlock;
    per_split_ = swapped_gemm_amax_split_blocks(p, t);
    if (t.splits < 1 || (t.splits - 1) * per_split_ >= kblocks_)
      throw OpsError("swapped gemm_amax kernel: " + std::to_string(t.splits) + " K splits of " +
                     std::to_string(kblocks_) + " K blocks; every split needs at least one");
    if (clustered(t)) require_cluster_splits("swapped gemm_amax kernel", t.splits);
  }

  Kernel& kernel() override { return k_; }
  tile::WarpSpecializedConfig config() const override {
    tile::WarpSpecializedConfig c;
    c.consumers = kConsumers;
    c.stages = t_.stages;
    c.full_barriers = l_.full;
    c.empty_barriers = l_.empty;
    c.empty_arrivals = kConsumers;  // each warpgroup's leader, in this CTA alone (nothing is multicast)
    if (clustered(t_)) c.cluster_m = t_.splits;  // the tile's splits: rank = split
    c.dependent_launch = false;  // only the loader waits, for A's tiles (producer)
    c.ctas_per_sm = t_.ctas_per_sm;
    if (t_.ctas_per_sm > 1) {
      // The entry cap (80 registers at two CTAs) for all; the producer
      // warpgroup keeps setmaxnreg's least, the consumers take the rest (104).
      const int threads = swapped_gemm_amax_threads();
      const int cap = tile::WarpSpecialized::entry_registers(threads, t_.ctas_per_sm);
      c.producer_registers = 24;
      c.consumer_registers = (cap * threads - 128 * c.producer_registers) / (128 * kConsumers) / 8 * 8;
    }
    return c;
  }
  void params(tile::WarpSpecialized& ws) override {
    ws_ = &ws;
    map_a_p_ = k_.param_bytes("map_a", 128, 64);
    map_b_p_ = k_.param_bytes("map_b", 128, 64);
    map_sfb_p_ = k_.param_bytes("map_sfb", 128, 64);
    c_ = k_.param_ptr("C", runtime::bits(p_.c_dtype) / 8);
    amax_ = k_.param_ptr("amax", 4);
    if (t_.splits > 1 && !clustered(t_)) workspace_ = k_.param(u64, "workspace");
  }
  void prologue(tile::WarpSpecialized& ws) override {
    base_ = ws.smem_base();
    tid_ = ws.tid();
    if (t_.splits > 1 && !clustered(t_)) splits_barrier_ = ws.named_barrier(128 * kConsumers);
    k_.if_then(tid_ == kLoader, [&] {
      map_a_ = k_.param_generic_address(map_a_p_);
      map_b_ = k_.param_generic_address(map_b_p_);
      map_sfb_ = k_.param_generic_address(map_sfb_p_);
      for (const Reg& map : {map_a_, map_b_, map_sfb_}) k_.prefetch_tensormap(map);
    });
  }
  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized&) override {
    auto source = std::make_unique<SwappedTile>(k_, p_, t_, per_split_, kblocks_);
    item_ = &source->item();
    return source;
  }
  void producer(tile::WarpSpecialized& ws) override;
  void consumer_setup(tile::WarpSpecialized& ws) override;
  void mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& s) override;
  void finish(const tile::WorkItem& w) override;

 private:
  static constexpr std::uint32_t kLoader = 128 * kConsumers;  // the producer warpgroup's first thread
  void load_b(const tile::PipelineState& s, const Reg& kb);
  void load_a(const Reg& stage, const Reg& kb);
  // The consumer thread's rows r = 64·warpgroup + 16·warp + lane / 4 and
  // r + 8 of the tile; lane t = lane % 4 takes codes 16t .. 16t + 15 of
  // each K block of both.
  struct Rows {
    Regs codes;     // row h's codes of the stage's block j: codes[h · blocks + j]
    Reg scales[2];  // the rows' scale bytes in a stage's first piece, less the block's column
    Reg t;
  };
  // The thread's codes and scale bytes of a stage's K blocks, loaded at
  // once after its full barrier (one shared-memory latency a stage, not a
  // block), and whether all its scales fold (and, FP8, no code is NaN or
  // inf): one check a stage.
  struct StageCodes {
    std::vector<Regs> words;  // row h's codes of block j: words[h · blocks + j]
    std::vector<Reg> bytes;   // row h's scale byte of block j: bytes[h · blocks + j]
    Pred fast;
  };
  Reg stage_address(const Reg& stage) { return base_ + stage * imm(l_.stage); }
  void load_stage(const Reg& stage, const Reg& kb);
  void convert(int slot, const Regs& out);
  std::uint64_t counter_offset() const {
    return static_cast<std::uint64_t>(swapped_gemm_amax_tiles(p_, t_) * t_.splits) *
           split_k_slot_bytes(128 * kConsumers, acc_tiles(t_));
  }

  const GemmAmaxProblem& p_;
  SwappedGemmAmaxTiling t_;
  Layout l_;
  Kernel k_;
  BlockCodes codes_;
  std::int64_t kblocks_ = 0, per_split_ = 0;
  tile::WarpSpecialized* ws_ = nullptr;
  const tile::WorkItem* item_ = nullptr;
  ParamRef map_a_p_, map_b_p_, map_sfb_p_;
  Reg c_, amax_, workspace_, base_, tid_, map_a_, map_b_, map_sfb_;
  std::optional<tile::NamedBarrier> splits_barrier_;  // the consumers, in split-K through the workspace
  // The consumers'.
  Rows r_;
  StageCodes staged_;
  Reg lane_, row0_, desc0_;
  Pred leader_;
  Regs acc_;
  std::vector<Regs> frags_;
};

// The loading thread: once both warpgroups have released the state's
// stage, expects the TMA loads of the stage's K blocks kb .. kb + blocks - 1
// there and requests B's codes (one box, blocks x 64 codes of 128 rows) and
// SFB's pieces (load_a requests A's tiles). Bytes past a tensor's extent
// are zeros and count toward the transaction (blocks past K are loaded so,
// and not multiplied).
void Swapped::load_b(const tile::PipelineState& s, const Reg& kb) {
  const ScaleFactorLayout sfb{p_.n, p_.k, p_.l, p_.vec};
  const tile::MbarrierPipeline& pipe = ws_->pipeline();
  const tile::Tile& t = item_->tile;
  pipe.acquire(s);
  Reg full = pipe.full_barrier(s);
  const std::uint32_t pieces = scale_pieces(p_, t_);
  pipe.expect_tx(full, imm(t_.blocks * l_.a_bytes + kSwappedRows * l_.b_row + pieces * kScalePiece));
  Reg stage = stage_address(s.stage());
  k_.tma_load(at(stage, l_.b_codes), map_b_, {kb * code_row_bytes(p_), t.n0, t.batch}, at(full));
  // SFB's piece (batch, row tile, group of 4 scale blocks) is rows
  // 2·piece, 2·piece + 1 of the scale bytes seen as 256-byte rows; a K
  // block is 2 scale blocks (vec 32) or 4 (vec 16).
  Reg group = p_.vec == 32 ? Reg(kb >> 1u) : kb;
  Reg piece = (t.batch * imm(sfb.row_tiles()) + (t.n0 >> 7u)) * imm(sfb.k_tiles()) + group;
  for (std::uint32_t i = 0; i < pieces; ++i)
    k_.tma_load(at(stage, l_.scales + i * kScalePiece), map_sfb_, {0u, (piece + i) << 1u}, at(full));
}

// A's tiles of the stage's K blocks kb .. into stage `stage`, whose full barrier load_b set.
void Swapped::load_a(const Reg& stage, const Reg& kb) {
  const tile::Tile& t = item_->tile;
  for (int j = 0; j < t_.blocks; ++j)
    k_.tma_load(at(stage_address(stage), l_.a_tile + imm(j) * l_.a_bytes), map_a_,
                {(kb + imm(j)) * imm(kSwappedBlock), t.m0, t.batch}, at(ws_->pipeline().full().address(stage)));
}

// A's copy is the pre-pass's output, and this kernel may start while the
// pre-pass runs (launched with overlap_previous): the first ring's B codes
// and scales are requested before griddepcontrol.wait, their A tiles after
// it.
void Swapped::producer(tile::WarpSpecialized&) {
  const Reg &kb0 = item_->kb0, &kb1 = item_->kb1;
  const auto blocks = imm(t_.blocks);
  k_.if_then(tid_ == kLoader, [&] {
    tile::PipelineState s(k_, t_.stages);
    Reg early_end = k_.min(kb1, kb0 + imm(t_.stages * t_.blocks));
    k_.for_nonempty_range(kb0, early_end, blocks, [&](Reg kb) {
      load_b(s, kb);
      ++s;
    });
    k_.griddepcontrol_wait();
    const std::uint32_t shift = t_.blocks == 4 ? 2 : t_.blocks == 2 ? 1 : 0;
    k_.for_nonempty_range(kb0, early_end, blocks, [&](Reg kb) { load_a((kb - kb0) >> shift, kb); });
    k_.for_range(early_end, kb1, blocks, [&](Reg kb) {
      load_b(s, kb);
      load_a(s.stage(), kb);
      ++s;
    });
  });
  if (clustered(t_)) join_cluster_split_reduce(k_);
}

// Loads the thread's codes and scale bytes of the stage's K blocks kb ..
// kb + blocks - 1 in stage `stage` (its full barrier waited for) into
// staged_, and checks once whether they take the fast conversion.
void Swapped::load_stage(const Reg& stage_index, const Reg& kb) {
  Reg stage = stage_address(stage_index);
  StageCodes& c = staged_;
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < t_.blocks; ++j) {
      const auto i = static_cast<std::size_t>(h * t_.blocks + j);
      k_.ld(Space::shared, b32, c.words[i], at(stage + r_.codes[i], l_.b_codes));
      // Block j's piece: its own at vec 16, block pairs share one at vec
      // 32; the block of the thread's 16 codes in the piece's 4: t at vec
      // 16, (2kb + t/2) % 4 at vec 32 (a stage of several blocks starts at
      // an even kb: splits are whole stages).
      const auto uj = static_cast<std::uint32_t>(j);
      const std::uint32_t piece = (p_.vec == 32 ? uj / 2 : uj) * kScalePiece;
      Reg column = p_.vec != 32    ? r_.t
                   : t_.blocks > 1 ? Reg((r_.t >> 1) + imm((uj & 1u) << 1))
                                   : Reg(((kb & 1u) << 1) + (r_.t >> 1));
      Reg narrow = k_.reg(u16);
      k_.ld(Space::shared, u8, narrow, at(stage + r_.scales[h] + column, l_.scales + piece));
      k_.cvt(c.bytes[i], narrow);
    }
  k_.mov(c.fast, fp4(p_) ? codes_.scales_fold(c.bytes, 1)
                         : Pred(codes_.scales_fold(c.bytes, 1) && codes_.codes_finite(c.words)));
}

// Converts the thread's codes of the staged block `slot` into `out` (16
// registers: pair q of row h in out[8h + q], BlockCodes' order).
void Swapped::convert(int slot, const Regs& out) {
  auto run = [&](bool folded) {
    for (std::size_t h = 0; h < 2; ++h) {
      const auto i = h * static_cast<std::size_t>(t_.blocks) + static_cast<std::size_t>(slot);
      Reg f = codes_.scale_factor(staged_.bytes[i], 0, 1, folded);
      const Regs dst(out.begin() + 8 * static_cast<std::ptrdiff_t>(h),
                     out.begin() + 8 * static_cast<std::ptrdiff_t>(h) + 8);
      if (fp4(p_))
        codes_.dequant_fp4(staged_.words[i], Regs{f, f}, dst, folded);
      else
        codes_.dequant_fp8(staged_.words[i], f, dst, folded);
    }
  };
  k_.if_else(staged_.fast, [&] { run(true); }, [&] { run(false); });
}

// A's tiles: K-major 128-byte rows in 8-row atoms (SBO one atom; LBO
// unused with the 128-byte swizzle, encoded as 16).
void Swapped::consumer_setup(tile::WarpSpecialized& ws) {
  lane_ = tid_ & 31u;
  r_.t = lane_ & 3u;
  row0_ = ((tid_ >> 5) << 4) + (lane_ >> 2);  // 16 rows a warp, warps 0-7 of the two warpgroups
  // A row's codes of block j at j · code_row_bytes, the thread's from
  // 16t codes on; with the B swizzle (128-byte rows), the 16-byte unit u
  // of the byte at offset x is u ^ ((x >> 7) % 8)
  // (PTX ISA 5.5.7, "Tensor swizzling modes").
  const std::uint32_t swizzle = swapped_gemm_amax_b_swizzle(p_, t_);
  r_.codes.clear();
  for (int h = 0; h < 2; ++h) {
    Reg row = row0_ + imm(8 * h);
    for (int j = 0; j < t_.blocks; ++j) {
      Reg x = row * l_.b_row + (r_.t << imm(fp4(p_) ? 3 : 4)) + imm(static_cast<std::uint32_t>(j) * code_row_bytes(p_));
      if (swizzle) x = x ^ (((x >> 7u) & 7u) << 4u);
      r_.codes.push_back(x);
    }
    r_.scales[h] = ((row & 31u) << 4) + (((row >> 5) & 3u) << 2);
  }
  staged_.words.clear();
  staged_.bytes.clear();
  for (int i = 0; i < 2 * t_.blocks; ++i) {
    staged_.words.push_back(k_.regs(b32, fp4(p_) ? 2 : 4));
    staged_.bytes.push_back(k_.reg(u32));
  }
  staged_.fast = k_.pred();
  acc_ = k_.regs(f32, t_.tokens / 2, "acc");
  frags_ = {k_.regs(b32, 16, "bfrag"), k_.regs(b32, 16, "bfrag_next")};
  desc0_ = tile::warpgroup::smem_descriptor(k_, base_ + l_.a_tile, 16, kSwizzleAtom);
  leader_ = ws.leader();
}

// K block kb's wgmma on `now` while the next block's codes go into `next`;
// the sets trade roles without moves, so a trip runs two blocks, or a
// stage's four. A stage is waited for before its first block's conversion
// and released once its last block's wgmma are done. Each k16 step moves
// 32 bytes along A's K-major rows.
void Swapped::mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& s) {
  const tile::warpgroup::KBlock block{.ab = bf16, .k_steps = kSwappedBlock / 16};
  const int blocks = t_.blocks;
  Reg current = k_.reg(u32);  // the stage of the block the wgmma read
  // A's descriptor at that stage's first block (its address counts 16-byte units).
  Reg stage_desc = k_.reg(u64);
  auto advance = [&] {
    k_.mov(current, s.stage());
    k_.cvt(stage_desc, current * imm(l_.stage >> 4));
    k_.add(stage_desc, stage_desc, desc0_);
    ++s;
  };
  ws.pipeline().wait(s);
  load_stage(s.stage(), w.kb0);
  convert(0, frags_[0]);
  advance();
  // Block kb, slot `slot` of its stage (a split's first block starts a
  // stage); `followed`: a block of the split is known to come after it (no
  // test of kb + 1 < kb1 emitted); a stage's blocks after its first add to
  // the sums (only a first block can be the split's first).
  auto step = [&](const Reg& kb, int slot, const Regs& now, const Regs& next, bool followed) {
    const std::uint32_t slot_offset = (static_cast<std::uint32_t>(slot) * l_.a_bytes) >> 4;
    Reg desc = slot > 0 ? Reg(stage_desc + imm(static_cast<std::uint64_t>(slot_offset))) : stage_desc;
    const std::variant<bool, PredUse> accumulate =
        slot > 0 ? std::variant<bool, PredUse>(true) : PredUse(kb != w.kb0);
    std::vector<Regs> a_steps;
    for (std::size_t i = 0; i < 8; i += 2) a_steps.push_back(Regs{now[i], now[8 + i], now[i + 1], now[8 + i + 1]});
    tile::warpgroup::mma_k_block(k_, block, acc_, a_steps, desc, accumulate);
    std::optional<Pred> more;
    if (!followed) more = kb + 1u < w.kb1;
    auto if_more = [&](const std::function<void()>& then) { more ? k_.if_then(*more, then) : then(); };
    const bool same_stage = slot + 1 < blocks;
    auto next_stage = [&] {
      ws.pipeline().wait(s);
      load_stage(s.stage(), kb + 1u);
      convert(0, next);
    };
    if_more([&] { same_stage ? convert(slot + 1, next) : next_stage(); });
    k_.wgmma_wait_group(0);
    if (same_stage) {
      if (more) k_.if_then(!*more && leader_, [&] { ws.pipeline().release(current); });
    } else {
      k_.if_then(leader_, [&] { ws.pipeline().release(current); });
      if_more(advance);
    }
  };
  // A trip is a stage's blocks (two single-block stages at one block a
  // stage, so that the fragment sets trade back). Where every split is
  // whole trips (splits are whole stages: so wherever K's blocks fill the
  // last stage), a trip's blocks but its last are known to have a
  // successor and run without tests; else each block tests for the next.
  const int trip = std::max(2, blocks);
  const bool whole_trips = per_split_ % trip == 0 && (kblocks_ - (t_.splits - 1) * per_split_) % trip == 0;
  auto frags = [&](int i) -> const Regs& { return frags_[static_cast<std::size_t>(i % 2)]; };
  std::function<void(const Reg&, int)> from = [&](const Reg& kb, int i) {
    const Reg b = i == 0 ? kb : Reg(kb + imm(i));
    const bool followed = whole_trips && i + 1 < trip;
    step(b, i % blocks, frags(i), frags(i + 1), followed);
    if (i + 1 == trip) return;
    if (followed)
      from(kb, i + 1);
    else
      k_.if_then(b + 1u < w.kb1, [&] { from(kb, i + 1); });
  };
  k_.for_nonempty_range(w.kb0, w.kb1, imm(trip), [&](Reg kb) { from(kb, 0); });
}

// Cᵀ stored and amax folded (transposed_output.hpp), after the K splits'
// sums are added in split order: inside the cluster, or through the workspace.
void Swapped::finish(const tile::WorkItem& w) {
  std::vector<Regs> tiles;
  for (std::size_t j = 0; j < acc_.size(); j += 4) tiles.push_back(Regs(acc_.begin() + j, acc_.begin() + j + 4));
  const TransposedTiles out{tiles, 1, t_.tokens / 8, w.tile.n0 + row0_, w.tile.m0 + (r_.t << 1)};
  auto epilogue = [&] { store_transposed(k_, p_, out, w.tile.batch, c_, amax_, lane_); };
  if (t_.splits == 1) return epilogue();
  if (clustered(t_))
    return cluster_split_reduce(k_, tiles,
                                {.splits = t_.splits, .split = *w.split, .warps = 4 * kConsumers, .warp = tid_ >> 5,
                                 .lane = lane_, .slots = base_},
                                epilogue);
  split_k_reduce(k_, tiles,
                 {.threads = 128 * kConsumers, .thread = tid_, .unit = w.tile.unit, .split = *w.split,
                  .splits = t_.splits, .workspace = workspace_, .counter_offset = counter_offset(),
                  .flag = base_ + l_.last, .barrier = splits_barrier_},
                 epilogue);
}

}  // namespace

std::uint32_t swapped_gemm_amax_b_swizzle(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t) {
  return static_cast<std::uint32_t>(t.blocks) * code_row_bytes(p) == 128 ? 128 : 0;
}

std::int64_t swapped_gemm_amax_split_blocks(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t) {
  const std::int64_t kblocks = p.k / kSwappedBlock, splits = std::max(t.splits, 1), blocks = std::max(t.blocks, 1);
  return ((kblocks + splits - 1) / splits + blocks - 1) / blocks * blocks;
}

std::int64_t swapped_gemm_amax_tiles(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t) {
  return row_tiles(p) * token_tiles(p, t) * p.l;
}

std::uint32_t swapped_gemm_amax_smem_bytes(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t) {
  return layout(p, t).bytes;
}

std::size_t swapped_gemm_amax_split_bytes(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t) {
  if (t.splits == 1 || clustered(t)) return 0;
  const auto tiles = static_cast<std::size_t>(swapped_gemm_amax_tiles(p, t));
  return tiles * static_cast<std::size_t>(t.splits) * split_k_slot_bytes(128 * kConsumers, acc_tiles(t)) +
         tiles * 4;
}

int swapped_gemm_amax_threads() { return 128 * (kConsumers + 1); }

ptx::Module build_swapped_gemm_amax(const GemmAmaxProblem& problem, const SwappedGemmAmaxTiling& tiling) {
  Swapped design(problem, tiling);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
