#include "warpforge/tile/mbarrier_array.hpp"

#include <string>

#include "warpforge/error.hpp"

namespace warpforge::tile {

MbarrierArray::MbarrierArray(dsl::Kernel& k, dsl::Reg base, std::uint32_t offset, int count)
    : k_(&k), base_(std::move(base)), offset_(offset), count_(count) {
  if (count < 1)
    throw TileError("mbarrier array of " + std::to_string(count) + " barriers in kernel '" +
                    k.name() + "': it needs at least 1");
  if (offset % kBytes != 0)
    throw TileError(
        "mbarrier array at byte offset " + std::to_string(offset) + " in kernel '" + k.name() +
        "': an mbarrier is aligned to 8 bytes; an offset that is a multiple of 8 is needed");
}

dsl::Reg MbarrierArray::address(const dsl::Reg& i) const {
  return base_ + offset_ + (i << 3);
}

dsl::Addr MbarrierArray::at(int i) const {
  if (i < 0 || i >= count_)
    throw TileError("mbarrier " + std::to_string(i) + " of an array of " + std::to_string(count_) +
                    " in kernel '" + k_->name() + "': indices are 0.." +
                    std::to_string(count_ - 1));
  return dsl::at(base_, offset_ + kBytes * i);
}

void MbarrierArray::init(int i, const dsl::Src& arrivals) const {
  k_->mbarrier_init(at(i), arrivals);
}

void MbarrierArray::arrive(const dsl::Reg& i) const {
  k_->mbarrier_arrive(dsl::at(address(i)));
}

void MbarrierArray::expect_tx(const dsl::Reg& i, const dsl::Src& bytes) const {
  k_->mbarrier_arrive_expect_tx(dsl::at(address(i)), bytes);
}

void MbarrierArray::wait(const dsl::Reg& i, const dsl::Src& parity) const {
  k_->mbarrier_wait_parity(dsl::at(address(i)), parity);
}

}  // namespace warpforge::tile
