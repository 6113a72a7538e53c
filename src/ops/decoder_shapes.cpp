#include "warpforge/ops/decoder_shapes.hpp"

namespace warpforge::ops {

const std::vector<GemmShape>& decoder_projections() {
  // m is unused here (0): the sweep sets it.
  static const std::vector<GemmShape> all = {
      {0, 6144, 4096}, {0, 4096, 4096}, {0, 28672, 4096}, {0, 4096, 14336},
      {0, 10240, 8192}, {0, 8192, 8192}, {0, 57344, 8192}, {0, 8192, 28672}};
  return all;
}

const std::vector<std::int64_t>& decoder_tokens() {
  static const std::vector<std::int64_t> all = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
  return all;
}

std::vector<GemmShape> decoder_sweep() {
  std::vector<GemmShape> shapes;
  for (const GemmShape& p : decoder_projections())
    for (std::int64_t m : decoder_tokens()) shapes.push_back({m, p.n, p.k});
  return shapes;
}

}  // namespace warpforge::ops
