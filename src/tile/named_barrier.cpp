#include "warpforge/tile/named_barrier.hpp"

#include <string>

#include "warpforge/error.hpp"

namespace warpforge::tile {

// PTX ISA 9.7.13.1: 16 barriers per CTA.
constexpr std::int64_t kNamedBarriers = 16;

NamedBarrier::NamedBarrier(dsl::Kernel& k, const dsl::Src& id, int threads)
    : k_(&k), id_(id), threads_(threads) {
  if (!id.is_reg()) {
    const std::int64_t value = id.imm().int_value();
    if (value < 0 || value >= kNamedBarriers)
      throw TileError("named barrier id " + std::to_string(value) + " in kernel '" + k.name() +
                      "': a CTA has barriers 0.." + std::to_string(kNamedBarriers - 1));
  }
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    throw TileError("named barrier of " + std::to_string(threads) + " threads in kernel '" +
                    k.name() + "': the count is a multiple of the warp size (32) in 32..1024");
}

NamedBarrierSet::NamedBarrierSet(dsl::Kernel& k, int first, int count, int threads)
    : k_(&k), first_(first), count_(count), threads_(threads) {
  if (first < 1 || count < 1 || first + count > kNamedBarriers)
    throw TileError("named barriers " + std::to_string(first) + ".." + std::to_string(first + count - 1) +
                    " in kernel '" + k.name() + "': a set takes ids 1.." + std::to_string(kNamedBarriers - 1) +
                    " (0 is the CTA's barrier)");
  NamedBarrier(k, first, threads);  // checks the thread count
}

NamedBarrier NamedBarrierSet::of(const dsl::Reg& index) const {
  return NamedBarrier(*k_, index + first_, threads_);
}

void NamedBarrier::sync() const {
  k_->bar_sync(id_, threads_);
}

void NamedBarrier::sync_unaligned() const {
  k_->barrier_sync(id_, threads_);
}

void NamedBarrier::arrive() const {
  k_->bar_arrive(id_, threads_);
}

}  // namespace warpforge::tile
