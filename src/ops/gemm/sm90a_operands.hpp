// The sm90a GEMM's operands (the design of sm90a_kernel.cpp): its kernel
// parameters, and A's and B's tiles in shared memory as TMA writes them and
// wgmma reads them. K-major tiles are 8-row atoms of 128-byte rows
// (SBO = one atom, LBO unused: encoded as 16); MN-major tiles are boxes of
// 64 K rows, 64 elements wide (32 for B in the 64-byte swizzle:
// Sm90aSpec::b_box_cols), LBO = the next box along M/N, SBO = the next 8 K
// rows (PTX ISA 9.7.15.5.1, the matrix descriptor).
#pragma once

#include <optional>

#include "sm90a_epilogue.hpp"
#include "sm90a_kernel.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::ops {

// The kernel's parameters, declared in the order sm90a_kernel.hpp lists.
struct Sm90aParams {
  dsl::ParamRef map_a, map_b, map_d;  // tensor maps (grid constants)
  Sm90aOutput out;                    // D's and C's (out.map_d: set from map_d in the prologue)
  dsl::Reg k, l, amax;
};
Sm90aParams sm90a_params(dsl::Kernel& k, const Sm90aSpec& s);

// One operand's tile of a stage: `rows` of M (A) or N (B) by 64 of K,
// K-major, or MN-major in boxes box_cols wide.
struct Sm90aOperandTile {
  int rows;
  bool k_major;
  int box_cols;
};
inline Sm90aOperandTile sm90a_a_tile(const Sm90aSpec& s) { return {s.a_load_rows(), s.a_k_major, 64}; }
inline Sm90aOperandTile sm90a_b_tile(const Sm90aSpec& s) { return {s.tile_n, s.b_k_major, s.b_box_cols()}; }

// Loads share `part` of `parts` of tile `t` (rows from row0, the k-block
// at K element kx) into `dst`, completing on mbarrier `full`, multicast to
// the CTAs of `mask` when given: K-major as one box of rows / parts x 64,
// MN-major as rows / box_cols / parts boxes.
void sm90a_load_share(dsl::Kernel& k, const Sm90aOperandTile& t, const dsl::Reg& map, const dsl::Reg& dst,
                      const dsl::Reg& row0, const dsl::Reg& part, int parts, const dsl::Reg& kx,
                      const dsl::Reg& batch, const dsl::Reg& full, const std::optional<dsl::Src>& mask);

// wgmma's descriptors of stage 0 (at smem base `base`): A's 64 rows from
// row `rows` of the tile, and B's tile.
dsl::Reg sm90a_a_descriptor(dsl::Kernel& k, const Sm90aSpec& s, const Sm90aSmem& smem, const dsl::Reg& base,
                            const dsl::Reg& rows);
dsl::Reg sm90a_b_descriptor(dsl::Kernel& k, const Sm90aSpec& s, const Sm90aSmem& smem, const dsl::Reg& base);

// A k-block's wgmma steps: a k16 step moves 32 bytes along a K-major row,
// or 16 K rows (two 8-row atoms) down an MN-major box.
tile::warpgroup::KBlock sm90a_k_block(const Sm90aSpec& s);

}  // namespace warpforge::ops
