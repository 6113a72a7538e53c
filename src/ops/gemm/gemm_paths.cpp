#include "gemm_path.hpp"

namespace warpforge::ops {

const std::vector<const GemmPath*>& gemm_paths() {
  // sm90a (TMA + wgmma) goes first: it refuses what it cannot run (other
  // devices, what TMA cannot describe), and sm80 takes the rest. sm100a
  // (tcgen05, experimental) runs only when named.
  static const std::vector<const GemmPath*> paths = {&sm90a_gemm_path(), &sm80_gemm_path(),
                                                     &sm100a_gemm_path()};
  return paths;
}

}  // namespace warpforge::ops
