// The sm90a GEMM's configuration (sm90a_kernel.hpp): a spec's kernel name,
// its shared-memory carve-up and what a spec must hold to be built.
#include <string>

#include "sm90a_kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/warp_specialized.hpp"

namespace warpforge::ops {

std::string Sm90aSpec::name() const {
  return "gemm_sm90a_" + std::string(runtime::name(ab)) + "_" + std::string(runtime::name(d)) + "_" +
         (a_k_major ? "ak" : "am") + (b_k_major ? "bk" : "bn") + "_" + std::to_string(tile_m()) + "x" +
         std::to_string(tile_n) + "_s" + std::to_string(stages) + (pingpong ? "_pingpong" : "") +
         (cluster_size() > 1 ? "_c" + std::to_string(cluster_m) + "x" + std::to_string(cluster_n) : "") +
         (epilogue_width() < tile_n ? "_e" + std::to_string(epilogue_width()) : "") + (stream_k ? "_sk" : "") +
         (a_rows ? "_ar" + std::to_string(a_rows) : "") + (has_c ? "_withc" : "") + (amax ? "_amax" : "");
}

Sm90aSmem sm90a_smem(const Sm90aSpec& s) {
  Sm90aSmem m{};
  m.a_stage = s.tile_m() * kSm90aTileK * 2;
  m.b_stage = s.tile_n * kSm90aTileK * 2;
  // The epilogue buffer holds what the TMA store reads: a chunk's whole
  // boxes, not the tail stored from registers (at 128 x 224 that frees the
  // 8 KB a fourth stage needs). Stream-K stages a chunk's partial sums through it.
  const int boxed = s.epilogue_width() - (s.stream_k ? 0 : sm90a_tail_cols(s));
  m.epilogue_per_consumer = (s.pingpong ? s.wg_rows : 64) * boxed * (runtime::bits(s.d) / 8);
  tile::SharedLayout layout;
  m.a = layout.ring(m.a_stage, s.stages);
  m.b = layout.ring(m.b_stage, s.stages);
  m.epilogue = layout.buffer(s.consumers * m.epilogue_per_consumer, tile::SharedLayout::kBaseAlignment);
  m.full = layout.mbarriers(s.stages);
  m.empty = layout.mbarriers(s.stages);
  m.bytes = layout.launch_bytes();
  return m;
}

void check_sm90a_spec(const Sm90aSpec& s) {
  if (s.a_rows && (s.a_rows % 8 != 0 || s.a_rows > s.tile_m() || !s.a_k_major || s.cluster_n > 1))
    throw OpsError("sm90a gemm: a_rows " + std::to_string(s.a_rows) + " with tile_m " + std::to_string(s.tile_m()) +
                   (s.a_k_major ? "" : ", M-major A") + (s.cluster_n > 1 ? ", a cluster along N" : "") +
                   "; a multiple of 8 up to tile_m, for K-major A without a cluster along N");
  if (!s.b_k_major && s.tile_n % (s.cluster_m * s.b_box_cols()) != 0)
    throw OpsError("sm90a gemm: N-major B " + std::to_string(s.tile_n) + " columns wide in boxes of " +
                   std::to_string(s.b_box_cols()) + ", cluster " + std::to_string(s.cluster_m) +
                   " along M; the boxes are multicast as many to each CTA of the pair");
}

}  // namespace warpforge::ops
