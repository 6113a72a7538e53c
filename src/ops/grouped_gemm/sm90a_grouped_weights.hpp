// The stage of packed weights (grouped_gemm.hpp, PackedWeightsLayout) that
// the sm90a RS design (sm90a_grouped_rs.hpp) loads a k-block at a time:
// the codes and scales of tile_n weight rows x 64 of K, by TMA, in the
// packed layout's own order (its consumers read their fragments there).
//
// A stage holds k-block kb's codes and scales of the tile's rows: for each
// of the tile_n / 16 row tiles (16 rows) the packed block (g, r, kb / 4)'s
// pieces of lanes 4q + kb % 4 (q = 0..7: the lanes that hold codes
// [64(kb % 4), + 64) of the chunk; PackedWeightsLayout), J = 2 x piece / 16
// loads of them, [row tile][load j][q] x 16 bytes (one TMA box of a 5-D map
// over the packed codes), then the blocks' whole scale pieces (32 lanes x S
// bytes a row tile, a 3-D map).
#pragma once

#include <cstdint>

#include "grouped_gemm_problem.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {

class GroupedWeightTiles {
 public:
  GroupedWeightTiles(const GroupedGemmProblem& p, int tile_n);

  std::uint32_t codes_bytes() const;  // a stage's codes
  std::uint32_t stage_bytes() const;  // a stage's codes and scales (what its TMA loads bring)
  int loads() const { return fp4() ? 4 : 8; }       // J: 16-byte loads of a lane's two pieces
  int lane_scales() const { return 128 / p_.vec; }  // S: a lane's scale bytes (two rows' pieces)

  // The tensor maps of the packed codes and scales (u8).
  runtime::TensorMapDesc codes_map(runtime::DevicePtr codes) const;
  runtime::TensorMapDesc scales_map(runtime::DevicePtr scales) const;

  // Producer: k-block kb's codes and scales of the rows from n0 of group
  // `group` into the stage at `stage` (shared), completing on `full`.
  void load(dsl::Kernel& k, const dsl::Reg& stage, const dsl::Reg& map_codes, const dsl::Reg& map_scales,
            const dsl::Reg& group, const dsl::Reg& n0, const dsl::Reg& kb, const dsl::Reg& full) const;

 private:
  bool fp4() const { return p_.b_dtype == runtime::DType::e2m1; }
  int row_tiles() const { return tile_n_ / 16; }

  GroupedGemmProblem p_;
  int tile_n_;
};

}  // namespace warpforge::ops
