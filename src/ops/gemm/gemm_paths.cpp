#include "gemm_path.hpp"

namespace warpforge::ops {

const std::vector<const GemmPath*>& gemm_paths() {
  // sm90a (TMA + wgmma) goes first once it is built: it refuses what it
  // cannot run, and sm80 takes the rest.
  static const std::vector<const GemmPath*> paths = {&sm80_gemm_path()};
  return paths;
}

}  // namespace warpforge::ops
