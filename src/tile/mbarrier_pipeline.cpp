#include "warpforge/tile/mbarrier_pipeline.hpp"

#include <string>

#include "warpforge/error.hpp"

namespace warpforge::tile {

using namespace dsl;

PipelineState::PipelineState(Kernel& k, int stages) : k_(&k), stages_(stages) {
  if (stages < 1)
    throw TileError("pipeline of " + std::to_string(stages) + " stages in kernel '" + k.name() +
                    "': it needs at least 1");
  stage_ = k.mov(u32, 0);
  phase_ = k.mov(u32, 0);
}

PipelineState& PipelineState::operator++() {
  k_->add(stage_, stage_, 1);
  Pred wrap = stage_ == stages_;
  k_->selp(stage_, 0, stage_, wrap);
  Reg flip = k_->reg(u32);
  k_->selp(flip, 1, 0, wrap);
  k_->xor_(phase_, phase_, flip);
  return *this;
}

void PipelineState::skip(const Src& steps) {
  Reg ahead = stage_ + steps;
  Reg wraps = k_->reg(u32);
  k_->div(wraps, ahead, stages_);
  k_->rem(stage_, ahead, stages_);
  k_->xor_(phase_, phase_, wraps & 1);
}

MbarrierPipeline::MbarrierPipeline(MbarrierArray full, MbarrierArray empty)
    : full_(std::move(full)), empty_(std::move(empty)) {
  if (full_.size() != empty_.size())
    throw TileError("pipeline with " + std::to_string(full_.size()) + " full and " +
                    std::to_string(empty_.size()) +
                    " empty barriers: each stage has one of each, so the counts must match");
}

void MbarrierPipeline::init(const Src& full_arrivals, const Src& empty_arrivals) const {
  for (int st = 0; st < stages(); ++st) {
    full_.init(st, full_arrivals);
    empty_.init(st, empty_arrivals);
  }
}

void MbarrierPipeline::acquire(const PipelineState& s) const {
  full_.kernel().mbarrier_wait_parity(at(empty_.address(s.stage())), s.phase() ^ 1);
}

void MbarrierPipeline::expect_tx(const Reg& full_barrier, const Src& bytes) const {
  full_.kernel().mbarrier_arrive_expect_tx(at(full_barrier), bytes);
}

void MbarrierPipeline::commit(const Reg& stage) const {
  full_.kernel().mbarrier_arrive(at(full_.address(stage)));
}

void MbarrierPipeline::wait(const PipelineState& s) const {
  full_.kernel().mbarrier_wait_parity(at(full_.address(s.stage())), s.phase());
}

void MbarrierPipeline::release(const Reg& stage, int cluster_size) const {
  Kernel& k = full_.kernel();
  if (cluster_size < 1)
    throw TileError("pipeline release to a cluster of " + std::to_string(cluster_size) +
                    " CTAs in kernel '" + k.name() + "': a cluster has at least 1");
  Reg empty = empty_.address(stage);
  if (cluster_size == 1) {
    k.mbarrier_arrive(at(empty));
    return;
  }
  for (int r = 0; r < cluster_size; ++r) {
    Reg remote = k.reg(u32);
    k.mapa_shared(remote, empty, r);
    k.mbarrier_arrive_cluster(remote, Scope::cta);
  }
}

}  // namespace warpforge::tile
