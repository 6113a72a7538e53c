// The prologue of the simulator tests' DSL kernels that compute from a
// shared-memory image: 128 threads copy it from global memory, 4 bytes each
// step.
#pragma once

#include <cstdint>

#include "warpforge/dsl.hpp"

namespace warpforge::sim::testing {

// Copies `bytes` (a multiple of 4) from global `in` to shared address `base`.
inline void copy_image_to_shared(dsl::Kernel& k, const dsl::Reg& in, const dsl::Reg& base,
                                 const dsl::Reg& tid, std::int64_t bytes) {
  using namespace dsl;
  k.for_range(tid, bytes / 4, 128, [&](Reg i) {
    Reg offset = k.reg(u64), word = k.reg(u32);
    k.mul_wide(offset, i, 4);
    k.ld(Space::global, u32, word, at(in + offset));
    k.st(Space::shared, u32, at(base + (i << 2)), word);
  });
}

}  // namespace warpforge::sim::testing
