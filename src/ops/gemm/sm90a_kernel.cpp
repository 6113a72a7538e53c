#include "sm90a_kernel.hpp"

#include <memory>
#include <optional>
#include <vector>

#include "sm90a_epilogue.hpp"
#include "sm90a_operands.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/tile/named_barrier.hpp"
#include "warpforge/tile/tile_scheduler.hpp"
#include "warpforge/tile/warp_specialized.hpp"

namespace warpforge::ops {

using namespace dsl;

namespace {

// Work units (a cluster's tiles) per group along M of the grouped order:
// the CTAs running at once share A rows and B columns in L2.
constexpr int kGroupRows = 16;

// The GEMM as a design of the warp-specialized template
// (tile/warp_specialized.hpp): the template runs the roles, the pipeline,
// the persistent loop over the tile scheduler (cooperative, ping-pong,
// stream-K) and the clusters; the design loads A's and B's tiles of a
// k-block with TMA, multiplies a stage with wgmma and stores a finished
// tile through shared memory with TMA (sm90a_epilogue.hpp).
class Gemm final : public tile::WarpSpecializedDesign {
 public:
  explicit Gemm(const Sm90aSpec& s) : s_(s), smem_(sm90a_smem(s)), k_(s.name(), Target::sm_90a) {}
  Kernel& kernel() override { return k_; }

  tile::WarpSpecializedConfig config() const override {
    tile::WarpSpecializedConfig c{.consumers = s_.consumers,
                                  .schedule = s_.pingpong ? tile::ConsumerSchedule::pingpong
                                                          : tile::ConsumerSchedule::cooperative,
                                  .stages = s_.stages,
                                  .full_barriers = smem_.full,
                                  .empty_barriers = smem_.empty,
                                  // Only a_load_rows of A's tile arrive (the rest of its stage is not loaded).
                                  .stage_bytes = s_.a_load_rows() * kSm90aRow + smem_.b_stage,
                                  .cluster_m = s_.cluster_m,
                                  .cluster_n = s_.cluster_n};
    // Stream-K stages the partial sums it adds through the epilogue's buffer.
    if (s_.stream_k)
      c.stream_k = {static_cast<std::uint32_t>(s_.tile_m() * s_.tile_n * 4), smem_.epilogue,
                    smem_.epilogue_per_consumer};
    return c;
  }

  void params(tile::WarpSpecialized& ws) override {
    ws_ = &ws;
    p_ = sm90a_params(k_, s_);
  }

  void prologue(tile::WarpSpecialized& ws) override {
    base_ = ws.smem_base();
    epilogue_barriers_ = ws.warpgroup_barriers(128);
    map_a_ = k_.param_generic_address(p_.map_a);
    map_b_ = k_.param_generic_address(p_.map_b);
    p_.out.map_d = k_.param_generic_address(p_.map_d);
    epilogue_.emplace(k_, s_, smem_, p_.out, base_, ws.tid(), *epilogue_barriers_);
  }

  void initialize(tile::WarpSpecialized&) override {
    for (const Reg& map : {map_a_, map_b_, p_.out.map_d}) k_.prefetch_tensormap(map);
  }

  // Work units are a cluster's tiles, CTA rank r of a cluster taking tile
  // (r % cluster_m, r / cluster_m) of its unit, in groups of kGroupRows
  // units along M; with stream_k, the last units split by k-blocks between
  // CTAs, whose partial sums the template adds (tile/stream_k_reduction.hpp).
  std::unique_ptr<tile::WorkSource> work_source(tile::WarpSpecialized&) override {
    auto sched = std::make_unique<tile::TileScheduler>(
        k_,
        tile::TileSchedulerOptions{.tile_m = s_.tile_m(), .tile_n = s_.tile_n, .tile_k = kSm90aTileK,
                                   .cluster_m = s_.cluster_m, .cluster_n = s_.cluster_n,
                                   .group_rows = kGroupRows, .stream_k = s_.stream_k},
        p_.out.m, p_.out.n, p_.k, p_.l);
    sched_ = sched.get();
    return sched;
  }

  // A's and B's tiles of one k-block, each CTA of a cluster loading its
  // share of the tiles it shares and multicasting it to the others.
  void load(const tile::LoadStep& s) override {
    const tile::Tile& t = s.item.tile;
    const Reg& stage = s.state.stage();
    Reg kx = s.kb << 6;
    sm90a_load_share(k_, sm90a_a_tile(s_), map_a_, base_ + smem_.a + stage * smem_.a_stage, t.m0, sched_->rank_n(),
                     s_.cluster_n, kx, t.batch, s.full, ws_->row_multicast());
    sm90a_load_share(k_, sm90a_b_tile(s_), map_b_, base_ + smem_.b + stage * smem_.b_stage, t.n0, sched_->rank_m(),
                     s_.cluster_m, kx, t.batch, s.full, ws_->column_multicast());
  }

  // Cooperative: the warpgroups share each tile, 64 rows each (rows
  // 64·cw..). Ping-pong: each takes whole tiles, 64 or 128 rows as one or
  // two m64 accumulators; each accumulator's A descriptor starts at its
  // first row (sm90a_operands.hpp: the tiles' layouts).
  void consumer_setup(tile::WarpSpecialized& ws) override {
    epilogue_->begin();
    cw_ = ws.warpgroup();
    leader_ = ws.leader();
    const int halves = s_.pingpong ? s_.wg_rows / 64 : 1;
    for (int h = 0; h < halves; ++h) accs_.push_back(k_.regs(f32, s_.tile_n / 2, h == 0 ? "acc" : "acc_hi"));
    rows0_ = s_.pingpong ? k_.mov(u32, 0) : cw_ * 64;  // the warpgroup's first row in the tile
    for (int h = 0; h < halves; ++h) desc_a0_.push_back(sm90a_a_descriptor(k_, s_, smem_, base_, rows0_ + 64 * h));
    desc_b0_ = sm90a_b_descriptor(k_, s_, smem_, base_);
  }

  // One k-block: each accumulator's k16 steps on the stage's A and B tiles
  // (a commit group each), the descriptors moved on to the stage.
  int compute(const tile::ComputeStep& s) override {
    const tile::warpgroup::KBlock block = sm90a_k_block(s_);
    Reg a_offset = k_.reg(u64), db = k_.reg(u64);
    k_.cvt(a_offset, s.state.stage() * (smem_.a_stage >> 4));
    k_.cvt(db, s.state.stage() * (smem_.b_stage >> 4));
    k_.add(db, db, desc_b0_);
    const Pred& accumulate = s.accumulate();
    for (std::size_t h = 0; h < accs_.size(); ++h)
      tile::warpgroup::mma_k_block(k_, block, accs_[h], a_offset + desc_a0_[h], db, accumulate);
    return static_cast<int>(accs_.size());
  }

  void finish(const tile::WorkItem& w) override { epilogue_->store(accs_, w.tile, rows0_, cw_, leader_); }
  void consumer_teardown(tile::WarpSpecialized&) override { epilogue_->end(leader_, p_.amax); }

  // Stream-K: the accumulators, staged through the epilogue's buffer once
  // the last tile's store has read it.
  const Regs& partial_sums() const override { return accs_[0]; }
  void acquire_staging(tile::WarpSpecialized&) override {
    k_.if_then(leader_, [&] { k_.bulk_wait_group_read(0); });
    epilogue_barriers_->of(cw_).sync();
  }

 private:
  Sm90aSpec s_;
  Sm90aSmem smem_;
  Kernel k_;
  tile::WarpSpecialized* ws_ = nullptr;
  const tile::TileScheduler* sched_ = nullptr;
  Sm90aParams p_;
  Reg map_a_, map_b_, base_;  // the tensor maps' generic addresses, shared memory's base
  std::optional<tile::NamedBarrierSet> epilogue_barriers_;  // each consumer warpgroup's epilogue
  std::optional<Sm90aEpilogue> epilogue_;
  // The consumers': warpgroup, first thread, accumulators, first row in the
  // tile, wgmma descriptors of stage 0.
  Reg cw_, rows0_, desc_b0_;
  Pred leader_;
  std::vector<Regs> accs_;
  std::vector<Reg> desc_a0_;
};

}  // namespace

ptx::Module build_sm90a_gemm(const Sm90aSpec& s) {
  check_sm90a_spec(s);
  Gemm design(s);
  return tile::build_warp_specialized(design);
}

}  // namespace warpforge::ops
