#include <algorithm>
#include <string>

#include "difftest/families.hpp"
#include "warpforge/runtime/sha256.hpp"

namespace warpforge::difftest {

const std::vector<Family>& families() {
  static const std::vector<Family> all = {
      integer_family(),       compare_family(),      convert_family(), float_arith_family(),
      float_divide_family(),  float_approx_family(), warp_family(),    atomic_family(),
      matrix_memory_family(), mma_family(),          wgmma_family(),   kernel_family(),
      nvcc_family(),          triton_family(),
  };
  return all;
}

const Family* find_family(std::string_view name) {
  const auto& all = families();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const Family& f) { return f.name == name; });
  return it == all.end() ? nullptr : &*it;
}

std::uint64_t unit_seed(std::string_view family, std::string_view unit,
                        std::uint64_t recording_seed) {
  runtime::Sha256 h;
  h.update(family).update("/").update(unit);
  // 0 leaves the digest as the committed recordings had it.
  if (recording_seed != 0) h.update(" seed ").update(std::to_string(recording_seed));
  const runtime::Digest d = h.finish();
  std::uint64_t seed = 0;
  for (int i = 0; i < 8; ++i) seed = seed << 8 | d[static_cast<std::size_t>(i)];
  return seed;
}

}  // namespace warpforge::difftest
