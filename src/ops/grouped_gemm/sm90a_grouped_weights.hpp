// Weight-only prefill on the sm90a grouped design (sm90a_grouped_kernel.hpp):
// B's tile (tile_n weight rows x 64 of K, bf16) made in shared memory from
// the packed block-scaled codes (grouped_gemm.hpp, PackedWeightsLayout) by
// the consumer warpgroups, once a 128-token tile, so that wgmma multiplies
// bf16 x bf16 as in the bf16 design.
//
// The sm90a path runs the RS form (sm90a_grouped_rs.hpp) instead, which
// loads this same stage (load, the maps) and converts each weight once for
// up to 256 tokens into wgmma's registers.
//
// A stage holds k-block kb's codes and scales of the tile's rows: for each
// of the tile_n / 16 row tiles (16 rows) the packed block (g, r, kb / 4)'s
// pieces of lanes 4q + kb % 4 (q = 0..7: the lanes that hold codes
// [64(kb % 4), + 64) of the chunk; PackedWeightsLayout), J = 2 x piece / 16
// loads of them, [row tile][load j][q] x 16 bytes (one TMA box of a 5-D map
// over the packed codes), then the blocks' whole scale pieces (32 lanes x S
// bytes a row tile, a 3-D map).
//
// Consumer warpgroup w converts rows [w·tile_n/2, (w + 1)·tile_n/2) of the
// tile: its warp v takes row tiles (tile_n / 128)·v .., lane 4q + u rows q and
// q + 8 of each, codes [16u, 16u + 16) of the k-block (PackedWeightStream's
// exact conversion), stored as 32 bf16 bytes into the tile's K-major
// 128-byte rows in the 128-byte swizzle (16-byte piece c of row r at
// c ^ (r % 8): what TMA would have written, PTX ISA 5.5.7).
#pragma once

#include <cstdint>

#include "grouped_gemm_problem.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {

class GroupedWeightTiles {
 public:
  // Converted tiles in flight: a consumer writes tile i + 1 while wgmma of
  // both warpgroups may still read tiles i and i - 1 (one barrier a k-block).
  static constexpr int kTiles = 3;

  GroupedWeightTiles(const GroupedGemmProblem& p, int tile_n);

  std::uint32_t codes_bytes() const;  // a stage's codes
  std::uint32_t stage_bytes() const;  // a stage's codes and scales (what its TMA loads bring)
  std::uint32_t tile_bytes() const { return static_cast<std::uint32_t>(tile_n_) * 128; }  // one bf16 tile

  // The tensor maps of the packed codes and scales (u8).
  runtime::TensorMapDesc codes_map(runtime::DevicePtr codes) const;
  runtime::TensorMapDesc scales_map(runtime::DevicePtr scales) const;

  // Producer: k-block kb's codes and scales of the rows from n0 of group
  // `group` into the stage at `stage` (shared), completing on `full`.
  void load(dsl::Kernel& k, const dsl::Reg& stage, const dsl::Reg& map_codes, const dsl::Reg& map_scales,
            const dsl::Reg& group, const dsl::Reg& n0, const dsl::Reg& kb, const dsl::Reg& full) const;

  // Consumer warpgroup `warpgroup` (thread tid of 0..255): its rows of
  // k-block kb from the stage at `stage` into the bf16 tile at `tile`
  // (1024-byte aligned). The caller orders the writes before wgmma (fence,
  // barrier).
  void convert(dsl::Kernel& k, const dsl::Reg& tid, const dsl::Reg& stage, const dsl::Reg& kb,
               const dsl::Reg& tile) const;

 private:
  bool fp4() const { return p_.b_dtype == runtime::DType::e2m1; }
  int loads() const { return fp4() ? 4 : 8; }           // J: 16-byte loads of a lane's two pieces
  int lane_scales() const { return 128 / p_.vec; }      // S: a lane's scale bytes (two rows' pieces)
  int row_tiles() const { return tile_n_ / 16; }

  GroupedGemmProblem p_;
  int tile_n_;
};

}  // namespace warpforge::ops
