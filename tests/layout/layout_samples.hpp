// Deterministic families of small layouts for the algebra's property tests.
#pragma once

#include <cstdint>
#include <vector>

#include "warpforge/layout/layout.hpp"

namespace warpforge::layout::testing {

// A tiny linear congruential generator: the same sequence on every platform.
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  int64_t below(int64_t n) {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((state_ >> 33) % static_cast<uint64_t>(n));
  }

 private:
  uint64_t state_;
};

// `count` pseudo-random layouts of rank 1..3 with extents in {1,2,3,4} and
// strides in {0,1,2,4,6}; a quarter of the modes are nested pairs (depth 2).
inline std::vector<Layout> arbitrary_layouts(int count, uint64_t seed) {
  const int64_t extents[] = {1, 2, 3, 4};
  const int64_t strides[] = {0, 1, 2, 4, 6};
  Lcg rng(seed);
  std::vector<Layout> out;
  for (int n = 0; n < count; ++n) {
    int rank = 1 + static_cast<int>(rng.below(3));
    std::vector<IntTuple> shape, stride;
    for (int i = 0; i < rank; ++i) {
      if (rng.below(4) == 0) {
        shape.push_back({extents[rng.below(4)], extents[rng.below(4)]});
        stride.push_back({strides[rng.below(5)], strides[rng.below(5)]});
      } else {
        shape.emplace_back(extents[rng.below(4)]);
        stride.emplace_back(strides[rng.below(5)]);
      }
    }
    out.emplace_back(IntTuple(shape), IntTuple(stride));
  }
  return out;
}

// Injective layouts whose modes nest: a random permutation of the modes of a
// compact layout, each stride scaled by a gap factor, so that complements
// exist. Some extents are 1.
inline std::vector<Layout> injective_layouts(int count, uint64_t seed) {
  Lcg rng(seed);
  std::vector<Layout> out;
  for (int n = 0; n < count; ++n) {
    int rank = 1 + static_cast<int>(rng.below(3));
    std::vector<int64_t> extents(rank), order(rank);
    for (int i = 0; i < rank; ++i) {
      extents[i] = 1 + rng.below(4);
      order[i] = i;
    }
    for (int i = rank - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    std::vector<int64_t> stride(rank);
    int64_t span = 1;
    for (int i = 0; i < rank; ++i) {
      span *= 1 + rng.below(2);  // leave a gap below this mode half the time
      stride[order[i]] = span;
      span *= extents[order[i]];
    }
    std::vector<IntTuple> s, d;
    for (int i = 0; i < rank; ++i) {
      s.emplace_back(extents[i]);
      d.emplace_back(stride[i]);
    }
    out.emplace_back(IntTuple(s), IntTuple(d));
  }
  return out;
}

// Compact column-major layouts of rank 1..3, extents in 1..4.
inline std::vector<Layout> compact_layouts(int count, uint64_t seed) {
  Lcg rng(seed);
  std::vector<Layout> out;
  for (int n = 0; n < count; ++n) {
    int rank = 1 + static_cast<int>(rng.below(3));
    std::vector<IntTuple> s;
    for (int i = 0; i < rank; ++i) s.emplace_back(1 + rng.below(4));
    out.push_back(column_major(IntTuple(s)));
  }
  return out;
}

}  // namespace warpforge::layout::testing
