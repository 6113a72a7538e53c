#include "sm90a_grouped_rs.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "../gemm_amax/block_codes.hpp"
#include "../gemm_amax/transposed_output.hpp"
#include "grouped_store.hpp"
#include "sm90a_grouped_weights.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/warp_specialized.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {

constexpr int kBlock = GroupedRsConfig::kBlock;
constexpr std::uint32_t kRow = kBlock * 2;  // a token's 64 bf16 of K: one 128-byte row of the swizzle
constexpr std::uint32_t kAtom = 8 * kRow;   // the 128-byte swizzle's repeat (the descriptor's SBO)

// Pair p of a packed FP4 word into bf16's places (sign 15, fields 8..6 of
// each half; BlockCodes' representation, the value times 2^-126): the word
// shifted left by `left` masked to the places of the fields that shift
// brings, or-ed with it shifted right by `right` masked to the others'
// (kFp4Bits asks at most one of each of a pair; a shift moves each bit to
// one place, so a field's place holds its own bit). A pair with no right
// shift has mr = 0.
constexpr int kFp4Places[4] = {6, 7, 8, 15};  // M, E0, E1, S in a bf16 half
struct Fp4PairMove {
  std::uint32_t left = 0, right = 0, ml = 0, mr = 0;
};
constexpr int fp4_shift(int p, int b) { return kFp4Places[b] - PackedWeightsLayout::kFp4Bits[p][b]; }  // + left
constexpr Fp4PairMove fp4_pair_move(int p) {
  Fp4PairMove m;
  for (int b = 0; b < 4; ++b) {
    const std::uint32_t place = (1u << kFp4Places[b]) * 0x10001u;  // both halves
    if (fp4_shift(p, b) >= 0) {
      m.left = static_cast<std::uint32_t>(fp4_shift(p, b));
      m.ml |= place;
    } else {
      m.right = static_cast<std::uint32_t>(-fp4_shift(p, b));
      m.mr |= place;
    }
  }
  return m;
}
constexpr bool fp4_pair_move_valid(int p) {
  const Fp4PairMove m = fp4_pair_move(p);
  for (int b = 0; b < 4; ++b)
    if (fp4_shift(p, b) != static_cast<int>(m.left) && fp4_shift(p, b) != -static_cast<int>(m.right))
      return false;  // a second shift in one direction
  return true;
}
static_assert(fp4_pair_move_valid(0) && fp4_pair_move_valid(1) && fp4_pair_move_valid(2) && fp4_pair_move_valid(3),
              "every FP4 pair of PackedWeightsLayout::kFp4Bits must reach bf16's places by one left and one right shift");

// One stage: the tokens' tile (T rows of 128 bytes, swizzled), then the
// k-block's packed codes and scales of the item's weight rows; stages 1024
// bytes apart.
struct Smem {
  std::uint32_t stage, weights, ring, full, empty, table, flag, bytes;
};
Smem smem_of(const GroupedGemmProblem& p, const GroupedRsConfig& c) {
  Smem m{};
  m.weights = static_cast<std::uint32_t>(c.tokens) * kRow;
  m.stage = (m.weights + GroupedWeightTiles(p, c.rows()).stage_bytes() + kAtom - 1) / kAtom * kAtom;
  tile::SharedLayout layout;
  m.ring = layout.ring(m.stage, c.stages);
  m.full = layout.mbarriers(c.stages);
  m.empty = layout.mbarriers(c.stages);
  m.table = layout.buffer(static_cast<std::uint32_t>(sm90a_grouped_rs_schedule(p, c).table_bytes()), 4);
  m.flag = layout.buffer(4, 4);  // split_k_reduce's "last" from thread 0 to the others
  m.bytes = layout.launch_bytes();
  return m;
}

// The split sums' slots of every unit there can be (the units' counters after them).
std::uint64_t split_slot_bytes(const GroupedGemmProblem& p, const GroupedRsConfig& c) {
  const std::int64_t units = max_group_units(sm90a_grouped_rs_schedule(p, c), p.m);
  return static_cast<std::uint64_t>(units * c.splits) *
         split_k_slot_bytes(128 * c.consumers, static_cast<std::size_t>(c.tokens / 8));
}

// Item (token tile of a group, weight-row tile, split): tile.m0 its first
// token, tile.n0 its first weight row, tile.batch the group, tile.unit the
// unit, extra[0] the group's end, extra[1] the split; the split's k-blocks
// (K's with one split), none for the pseudo-group's (zeros) items.
class RsTiles final : public tile::WorkSource {
 public:
  RsTiles(Kernel& k, const GroupScheduleOptions& o, const Reg& offsets, const Reg& extent, const Reg& tid,
          const Reg& table, int tokens, int rows, std::int64_t k_blocks)
      : k_(k), schedule_(k, o, offsets, extent, tid, table), groups_(o.groups), tokens_(tokens), rows_(rows),
        k_blocks_(k_blocks), per_split_((k_blocks + o.splits - 1) / o.splits) {}

  void for_each(const std::function<void(const tile::WorkItem&)>& body, const Reg* offset,
                int stride) const override {
    if (offset || stride != 1)
      throw TileError("the RS grouped design's work source serves the cooperative schedule only (no offset, stride 1)");
    schedule_.for_each([&](const GroupWork& w) {
      Reg kb0 = k_.min(w.split * imm(per_split_), imm(k_blocks_));
      Reg kb1 = k_.min(kb0 + imm(per_split_), imm(k_blocks_));
      k_.selp(kb1, kb0, kb1, w.group == imm(groups_));
      body(tile::WorkItem{.tile = {w.begin + w.row_tile * imm(tokens_), w.col * imm(rows_), w.group, w.unit},
                          .kb0 = kb0,
                          .kb1 = kb1,
                          .extra = {w.end, w.split}});
    });
  }

 private:
  Kernel& k_;
  GroupSchedule schedule_;
  std::int64_t groups_;
  int tokens_, rows_;
  std::int64_t k_blocks_, per_split_;
};

class RsDesign final : public tile::WarpSpecializedDesign {
 public:
  RsDesign(const GroupedGemmProblem& p, const GroupedRsConfig& c)
      : p_(p), c_(c), smem_(smem_of(p, c)), weights_(p, c.rows()), k_(kSm90aGroupedRsKernel, Target::sm_90a),
        codes_problem_{.ab_dtype = p.b_dtype, .sf_dtype = p.sf_dtype, .vec = p.vec}, codes_(k_, codes_problem_) {}

  Kernel& kernel() override { return k_; }

  tile::WarpSpecializedConfig config() const override {
    tile::WarpSpecializedConfig w;
    w.consumers = c_.consumers;
    // 512 threads: 128 registers a thread at entry; the producer's 40 leave the consumers 152.
    if (c_.consumers == 3) w.consumer_registers = 152;
    w.stages = c_.stages;
    w.full_barriers = smem_.full;
    w.empty_barriers = smem_.empty;
    w.stage_bytes = smem_.weights + weights_.stage_bytes();
    return w;
  }

  void params(tile::WarpSpecialized&) override {
    map_a_p_ = k_.param_bytes("map_a", 128, 64);
    map_b_p_ = k_.param_bytes("map_b", 128, 64);
    map_sfb_p_ = k_.param_bytes("map_sfb", 128, 64);
    d_ = k_.param_ptr("D", 4);
    offsets_ = k_.param_ptr("offsets", 4);
    extent_ = k_.param(u32, "extent");
    if (c_.splits > 1) workspace_ = k_.param_ptr("workspace", 16);
  }

  void prologue(tile::WarpSpecialized& ws) override {
    base_ = ws.smem_base();
    tid_ = ws.tid();
    consumers_barrier_.emplace(ws.named_barrier(128 * c_.consumers));
    map_a_ = k_.param_generic_address(map_a_p_);
    map_b_ = k_.param_generic_address(map_b_p_);
    map_sfb_ = k_.param_generic_address(map_sfb_p_);
  }

  void initialize(tile::WarpSpecialized&) override {
    for (const Reg& map : {map_a_, map_b_, map_sfb_}) k_.prefetch_tensormap(map);
  }

  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized& ws) override {
    ws_ = &ws;
    return std::make_unique<RsTiles>(k_, sm90a_grouped_rs_schedule(p_, c_), offsets_, extent_, tid_,
                                     base_ + imm(smem_.table), c_.tokens, c_.rows(), (p_.k + kBlock - 1) / kBlock);
  }

  // The tokens' tile from the item's first token (TMA: tokens past the
  // group's end are loaded but never stored, past M zero-filled; K past
  // its end zero-filled, where the codes are zeros too) and the k-block's
  // codes and scales of the item's weight rows.
  void load(const tile::LoadStep& s) override {
    const tile::Tile& t = s.item.tile;
    Reg stage = base_ + imm(smem_.ring) + s.state.stage() * imm(smem_.stage);
    k_.tma_load(at(stage), map_a_, {s.kb << 6u, t.m0, 0u}, at(s.full));
    weights_.load(k_, stage + imm(smem_.weights), map_b_, map_sfb_, t.batch, t.n0, s.kb, s.full);
  }

  void consumer_setup(tile::WarpSpecialized& ws) override;
  void mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& s) override;
  void finish(const tile::WorkItem& w) override;

 private:
  void convert(const tile::PipelineState& s, const Reg& kb, const Regs& out);
  void mma_narrowest(const tile::warpgroup::KBlock& block, const std::vector<Regs>& a_steps, const Reg& desc,
                     const Pred& accumulate, const Reg& left, int n);
  void store(const tile::WorkItem& w, const Regs& values, const Pred* empty);
  Reg pair_of(const Reg& word);

  bool fp4() const { return p_.b_dtype == DType::e2m1; }
  void fp4_pair_constants(const Reg& t);

  const GroupedGemmProblem& p_;
  GroupedRsConfig c_;
  Smem smem_;
  GroupedWeightTiles weights_;
  Kernel k_;
  GemmAmaxProblem codes_problem_;  // what BlockCodes reads: the codes' and scales' dtypes
  BlockCodes codes_;
  tile::WarpSpecialized* ws_ = nullptr;
  ParamRef map_a_p_, map_b_p_, map_sfb_p_;
  Reg map_a_, map_b_, map_sfb_, d_, offsets_, extent_, workspace_, base_, tid_;
  // The consumer warpgroups' (the split sums' reduction).
  std::optional<tile::NamedBarrier> consumers_barrier_;
  // The consumers': the thread's row g of its warp's 16 (of 128), its t,
  // its pieces' and scales' offsets in a stage, its FP8 half's shift, its
  // FP4 pair's shifts and masks (Fp4PairMove), the descriptor of stage 0's
  // tokens.
  Reg lane_, row_, codes_at_, scales_at_, shift_, left_, right_, mask_left_, mask_right_, desc0_;
  Pred leader_;
  Regs acc_;
  std::vector<Regs> frags_;
};

// Thread 128w + 32v + 4g + t of consumer warpgroup w: weight rows 64w +
// 16v + g and + 8, row tile 4w + v of the stage's 8 (GroupedWeightTiles:
// [row tile][load j][g] x 16 bytes, row h's piece in loads J/2·h ..
// J/2·h + J/2 - 1; then each row tile's 32 lanes x S scale bytes, lane 4g +
// kb % 4's S the rows' blocks, row g's then row g + 8's). FP4: pair t's
// move (fp4_pair_move). FP8: the thread's words are 4s + t / 2 and + 2 of
// k16 step s, its pair their half t % 2.
void RsDesign::consumer_setup(tile::WarpSpecialized& ws) {
  lane_ = tid_ & 31u;
  Reg g = lane_ >> 2u, t = lane_ & 3u, row_tile = tid_ >> 5u;
  row_ = (row_tile << 4u) + g;
  codes_at_ = imm(smem_.weights) + row_tile * imm(weights_.loads() * 8 * 16) + (g << 4u);
  if (!fp4()) {
    codes_at_ = codes_at_ + ((t >> 1u) << 2u);
    shift_ = (t & 1u) << 4u;
  }
  scales_at_ = imm(smem_.weights) + weights_.codes_bytes() + row_tile * imm(32 * weights_.lane_scales()) +
               (g << 2u) * imm(weights_.lane_scales());
  if (fp4()) fp4_pair_constants(t);
  acc_ = k_.regs(f32, c_.tokens / 2, "acc");
  frags_ = {k_.regs(b32, 16, "wfrag"), k_.regs(b32, 16, "wfrag_next")};
  desc0_ = tile::warpgroup::smem_descriptor(k_, base_ + imm(smem_.ring), 16, kAtom);
  leader_ = ws.leader();
}

// The thread's pair t's shifts and masks (Fp4PairMove), chosen once.
void RsDesign::fp4_pair_constants(const Reg& t) {
  const auto pick = [&](std::uint32_t Fp4PairMove::*field) {
    Reg r = k_.mov(u32, imm(fp4_pair_move(3).*field));
    for (int p = 0; p < 3; ++p) k_.selp(r, imm(fp4_pair_move(p).*field), r, t == imm(p));
    return r;
  };
  left_ = pick(&Fp4PairMove::left);
  right_ = pick(&Fp4PairMove::right);
  mask_left_ = pick(&Fp4PairMove::ml);
  mask_right_ = pick(&Fp4PairMove::mr);
}

// The thread's pair of an FP4 word as a bf16 pair's fields (the codes'
// values times 2^-126; BlockCodes::apply_scale restores them): two shifts,
// each masked (Fp4PairMove), 5 instructions with the scale's multiply (s7's
// layout took three shifts and masks, 7). s8 window 1 moved the pair by one
// 64-bit multiply instead (IMAD.WIDE: 4 instructions): mixtral 8192 tokens
// 6.53 ms, 0.70 of bf16, slower than s7's 0.74 at 24% fewer instructions,
// 10.8 cycles between a warp's issues (7.7).
Reg RsDesign::pair_of(const Reg& word) {
  return ((word << left_) & mask_left_) | ((word >> right_) & mask_right_);
}

// Waits for stage `s` and converts the thread's fragments of k-block kb
// into `out`: out[8h + 2s + e] is row g + 8h's pair of k16 step s,
// columns 2t, 2t + 1 (e = 0) or 2t + 8, 2t + 9 (e = 1). FP4: word 2s + e
// of the row's piece, pair t; FP8: word 4s + t / 2 + 2e, half t % 2 (moved
// to the low half for BlockCodes::dequant_fp8).
void RsDesign::convert(const tile::PipelineState& s, const Reg& kb, const Regs& out) {
  ws_->pipeline().wait(s);
  Reg stage = base_ + imm(smem_.ring) + s.stage() * imm(smem_.stage);
  std::vector<Regs> words;  // [row h][2s + e]
  for (int h = 0; h < 2; ++h) {
    Regs w = k_.regs(b32, 8);
    for (int j = 0; j < 8; j += fp4() ? 4 : 1) {
      const std::int64_t piece = (h * weights_.loads() / 2) * 8 * 16;
      if (fp4())  // words 0-3 and 4-7: loads 2h, 2h + 1
        k_.ld(Space::shared, b32, Regs(w.begin() + j, w.begin() + j + 4),
              at(stage + codes_at_, piece + j / 4 * 8 * 16));
      else  // step j / 2's word: load 4h + j / 2, + 8 bytes for e = 1
        k_.ld(Space::shared, b32, w[static_cast<std::size_t>(j)],
              at(stage + codes_at_, piece + j / 2 * 8 * 16 + j % 2 * 8));
    }
    words.push_back(w);
  }
  // The scale bytes of lane 4g + kb % 4: two 16-bit halves a row (blocks 0, 1; vec 16 also 2, 3).
  Regs raw = k_.regs(b32, weights_.lane_scales() / 4);
  k_.ld(Space::shared, b32, raw, at(stage + scales_at_ + (kb & 3u) * imm(weights_.lane_scales())));
  std::vector<Reg> halves;  // [row h][pair of blocks]
  for (const Reg& r : raw) {
    halves.push_back(r & 0xFFFFu);
    halves.push_back(r >> 16u);
  }
  const int per_row = weights_.lane_scales() / 4;  // halves a row
  auto run = [&](bool folded) {
    for (int h = 0; h < 2; ++h) {
      std::vector<Reg> factors;
      for (int b = 0; b < 2 * per_row; ++b)
        factors.push_back(codes_.scale_factor(halves[static_cast<std::size_t>(h * per_row + b / 2)], b % 2, 2, folded));
      for (int w = 0; w < 8; ++w) {
        const Reg& factor = factors[static_cast<std::size_t>(16 * (w / 2) / p_.vec)];  // step w / 2's block
        const Reg& word = words[static_cast<std::size_t>(h)][static_cast<std::size_t>(w)];
        const Reg& d = out[static_cast<std::size_t>(8 * h + w)];
        if (fp4())
          codes_.apply_scale(d, pair_of(word), factor, folded);
        else
          codes_.dequant_fp8(Regs{word >> shift_}, factor, Regs{d}, folded);
      }
    }
  };
  Pred fold = fp4() ? codes_.scales_fold(halves, 2) : Pred(codes_.scales_fold(halves, 2) && codes_.codes_finite(words));
  k_.if_else(fold, [&] { run(true); }, [&] { run(false); });
}

// k-block kb's wgmma on `now` while the next k-block converts into `next`;
// two k-blocks a trip, so the sets trade roles without moves (wgmma reads
// its A registers until a wait retires it: PTX ISA 9.7.15.7.3). Keeping one
// k-block's wgmma in flight (wait_group 1, three sets) ran mixtral 8192
// tokens 8% slower (H200, s7 gpu-w2); staggering the warpgroups once (w's
// first wgmma after w - 1's completed) 13% slower (s8 gpu-w2). A k16 step
// moves 32 bytes along the tokens' K-major rows.
void RsDesign::mainloop(tile::WarpSpecialized& ws, const tile::WorkItem& w, tile::PipelineState& s) {
  k_.if_then(w.kb1 > w.kb0, [&] {
    const tile::warpgroup::KBlock block{.ab = bf16, .k_steps = kBlock / 16};
    Reg left = w.extra[0] - w.tile.m0;  // the group's tokens from the tile's first
    Reg current = k_.reg(u32);  // the stage the wgmma read
    convert(s, w.kb0, frags_[0]);
    k_.mov(current, s.stage());
    ++s;
    auto step = [&](const Reg& kb, const Regs& now, const Regs& next) {
      Reg desc = k_.reg(u64);
      k_.cvt(desc, current * imm(smem_.stage >> 4));  // the descriptor's address counts 16-byte units
      k_.add(desc, desc, desc0_);
      std::vector<Regs> a_steps;
      for (std::size_t i = 0; i < 8; i += 2) a_steps.push_back(Regs{now[i], now[8 + i], now[i + 1], now[8 + i + 1]});
      mma_narrowest(block, a_steps, desc, kb != w.kb0, left, 64);
      Pred more = kb + 1u < w.kb1;
      k_.if_then(more, [&] { convert(s, kb + 1u, next); });
      k_.wgmma_wait_group(0);
      k_.if_then(leader_, [&] { ws.pipeline().release(current); });
      k_.if_then(more, [&] {
        k_.mov(current, s.stage());
        ++s;
      });
    };
    k_.for_nonempty_range(w.kb0, w.kb1, 2u, [&](Reg kb) {
      step(kb, frags_[0], frags_[1]);
      k_.if_then(kb + 1u < w.kb1, [&] { step(kb + 1u, frags_[1], frags_[0]); });
    });
  });
}

// The k-block's wgmma over the fewest tokens, in 64s, that cover the
// group's `left` from the tile's first (all T where more): the accumulators'
// first n / 2 registers are tokens 0 .. n - 1 (PTX ISA 9.7.15.5.1.1.1), and
// a group's last tile is on average half empty (deepseek at 8192 tokens:
// ~256 tokens a group).
void RsDesign::mma_narrowest(const tile::warpgroup::KBlock& block, const std::vector<Regs>& a_steps, const Reg& desc,
                             const Pred& accumulate, const Reg& left, int n) {
  auto mma = [&](int tokens) {
    tile::warpgroup::mma_k_block(k_, block, Regs(acc_.begin(), acc_.begin() + tokens / 2), a_steps, desc, accumulate);
  };
  if (n >= c_.tokens) return mma(c_.tokens);
  k_.if_else(left <= imm(n), [&] { mma(n); }, [&] { mma_narrowest(block, a_steps, desc, accumulate, left, n + 64); });
}

// D[token][row] from `values` (the accumulators' layout): register 4j + 2h
// + e holds weight row g + 8h of the warp's 16 and token 8j + 2t + e of the
// tile (PTX ISA 9.7.15.5.1.1.1); tokens inside the group, rows inside N.
// With `empty`, the pseudo-group's items (no k-block) store zeros, selected
// rather than moved into the accumulators.
void RsDesign::store(const tile::WorkItem& w, const Regs& values, const Pred* empty) {
  const int bytes = runtime::bits(p_.d_dtype) / 8;
  Reg row0 = w.tile.n0 + row_, token0 = w.tile.m0 + ((lane_ & 3u) << 1u);
  Reg at_row = k_.reg(u64), at_token = k_.reg(u64);
  k_.mul_wide(at_row, row0, imm(bytes));
  k_.mul_wide(at_token, token0, imm(p_.d.ld * bytes));
  Reg lane_d = d_ + at_row + at_token;
  for (int h = 0; h < 2; ++h) {
    Pred row_in = (row0 + imm(8 * h)) < imm(p_.n);
    for (int j = 0; j < c_.tokens / 8; ++j)
      for (int e = 0; e < 2; ++e) {
        const std::size_t i = static_cast<std::size_t>(4 * j + 2 * h + e);
        Reg v = empty ? k_.selp(imm_f32(0.0f), values[i], *empty) : values[i];
        Reg address = lane_d + Src(static_cast<std::uint64_t>(((8 * j + e) * p_.d.ld + 8 * h) * bytes));
        store_d_element(k_, p_.d_dtype, address, v, row_in && ((token0 + imm(8 * j + e)) < w.extra[0]));
      }
  }
}

// One split: D from the accumulators. K split: the unit's last split to
// arrive adds every split's sums in split order (split_k_reduce over the
// consumer warpgroups' threads) and stores D. The sums are a copy (the
// pseudo-group's items, no k-block: zeros): the accumulators are never
// written outside wgmma, which ptxas answers by serializing every wgmma
// (C7515); T <= 128 when split (sm90a_grouped_rs_config) leaves room for it.
void RsDesign::finish(const tile::WorkItem& w) {
  Pred empty = w.kb1 == w.kb0;
  if (c_.splits == 1) return store(w, acc_, &empty);
  Regs sums = k_.regs(f32, static_cast<int>(acc_.size()));
  for (std::size_t i = 0; i < acc_.size(); ++i) k_.selp(sums[i], imm_f32(0.0f), acc_[i], empty);
  std::vector<Regs> tiles;  // the 4-float tiles split_k_reduce adds
  for (std::size_t i = 0; i < sums.size(); i += 4) tiles.emplace_back(sums.begin() + i, sums.begin() + i + 4);
  split_k_reduce(k_, tiles,
                 {.threads = 128 * c_.consumers,
                  .thread = tid_,
                  .unit = w.tile.unit,
                  .split = w.extra[1],
                  .splits = c_.splits,
                  .workspace = workspace_,
                  .counter_offset = split_slot_bytes(p_, c_),
                  .flag = base_ + imm(smem_.flag),
                  .barrier = consumers_barrier_},
                 [&] { store(w, sums, nullptr); });
}

// For experiments on a GPU (scripts/gpu-moe-prefill.sh's A/B rows):
// WARPFORGE_RS_TILING=T,C[,S] sets the tokens T, consumer warpgroups C and
// K split S (0 or none: the default's) of every RS kernel configured after
// it; build_sm90a_grouped_rs refuses what it cannot build.
void tiling_from_environment(GroupedRsConfig& c) {
  const char* text = std::getenv("WARPFORGE_RS_TILING");
  if (!text || !*text) return;
  int tokens = 0, consumers = 0, splits = 0;
  char end = 0;
  const int read = std::sscanf(text, "%d,%d,%d%c", &tokens, &consumers, &splits, &end);
  if (read < 2 || read > 3 || splits < 0)
    throw OpsError(std::string("WARPFORGE_RS_TILING '") + text +
                   "': expected tokens,consumers[,splits] (two or three integers, splits 0 or more, e.g. 64,3 or "
                   "128,2,2)");
  c.tokens = tokens, c.consumers = consumers;
  if (splits > 0) c.splits = splits;
}

}  // namespace

std::string GroupedRsConfig::describe() const {
  return std::to_string(rows()) + " rows x " + std::to_string(tokens) + " tokens x " + std::to_string(kBlock) + " s" +
         std::to_string(stages) + (splits > 1 ? ", K split " + std::to_string(splits) + " ways" : "");
}

bool sm90a_grouped_rs_takes(const GroupedGemmProblem& p) { return p.packed_b; }

GroupedRsConfig sm90a_grouped_rs_config(const GroupedGemmProblem& p, std::int64_t sms) {
  GroupedRsConfig c;
  const std::int64_t per_group = (p.m + std::max<std::int64_t>(p.groups, 1) - 1) / std::max<std::int64_t>(p.groups, 1);
  const std::int64_t tile = p.groups == 1 ? per_group : 2 * per_group;  // one group: no routing skew
  c.tokens = static_cast<int>(std::clamp<std::int64_t>((tile + 63) / 64 * 64, 64, 256));
  const std::int64_t fewest_units =
      std::max<std::int64_t>((p.m + c.tokens - 1) / c.tokens, 1) * ((p.n + c.rows() - 1) / c.rows());
  const std::int64_t k_blocks = (p.k + kBlock - 1) / kBlock;
  if (c.tokens <= 128 && 2 * fewest_units <= sms)
    c.splits = static_cast<int>(std::clamp<std::int64_t>(std::min(sms / fewest_units, k_blocks / 8), 1, 4));
  // Three warpgroups where their registers hold T's accumulators and no split's sums.
  if (c.tokens <= 128 && c.splits == 1) c.consumers = 3;
  tiling_from_environment(c);
  for (c.stages = 8; c.stages > 2 && sm90a_grouped_rs_shared_bytes(p, c) > 220 * 1024;) --c.stages;
  return c;
}

std::size_t sm90a_grouped_rs_workspace_bytes(const GroupedGemmProblem& p, const GroupedRsConfig& c) {
  if (c.splits == 1) return 0;
  const std::int64_t units = max_group_units(sm90a_grouped_rs_schedule(p, c), p.m);
  return static_cast<std::size_t>(split_slot_bytes(p, c) + static_cast<std::uint64_t>(units) * 4);
}

GroupScheduleOptions sm90a_grouped_rs_schedule(const GroupedGemmProblem& p, const GroupedRsConfig& c) {
  // The rows past the last group: items of zeros.
  GroupScheduleOptions o = ragged_rows_schedule(p, c.rows(), c.tokens, c.splits);
  // Bands of 8 token tiles walked weight-tile-major: the 132 CTAs at once
  // run ~16 weight tiles, each read from DRAM once for the band's tokens.
  o.band_rows = 8;
  return o;
}

std::uint32_t sm90a_grouped_rs_shared_bytes(const GroupedGemmProblem& p, const GroupedRsConfig& c) {
  return smem_of(p, c).bytes;
}

ptx::Module build_sm90a_grouped_rs(const GroupedGemmProblem& p, const GroupedRsConfig& c) {
  if (!p.packed_b || p.native_b || p.scaled_a || p.amax || p.form != GroupedForm::ragged_m ||
      p.a_dtype != DType::bf16 || !p.a.cols_contiguous)
    throw OpsError("sm90a RS grouped kernel: problem " + p.describe() +
                   "; it takes packed weights against bf16 tokens with K contiguous, ragged M");
  if (c.tokens < 8 || c.tokens > 256 || c.tokens % 8 != 0 || c.stages < 2 || c.stages > 8 || c.splits < 1 ||
      c.consumers < 2 || c.consumers > 3 || (c.consumers == 3 && (c.tokens > 128 || c.splits > 1)) ||
      sm90a_grouped_rs_shared_bytes(p, c) > 227 * 1024)
    throw OpsError("sm90a RS grouped kernel: configuration " + c.describe() + " needs " +
                   std::to_string(sm90a_grouped_rs_shared_bytes(p, c)) +
                   " bytes of shared memory; it takes 8 to 256 tokens (a multiple of 8), 2-8 stages within 227 KB, at "
                   "least one K split and 2 consumer warpgroups, or 3 up to 128 tokens without a split");
  RsDesign design(p, c);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
