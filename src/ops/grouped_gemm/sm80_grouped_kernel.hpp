// The sm80 grouped kernel: bf16/f16 grouped GEMM in both forms, for every
// device (mma.sync m16n8k16, sm_80 and up) and the simulator.
//
// Persistent: every CTA builds the group table (group_schedule.hpp) and
// walks its work units, each one output tile of tile_m x tile_n of one
// group (ragged M: rows [begin + row_tile·tile_m, ...) of that group, B
// the group's; ragged K: the whole (M, N) output of that group, over K in
// [begin, end)). A tile's mainloop is the sm80 GEMM's: a multistage
// cp.async pipeline of 16-byte copies into swizzled shared-memory panels
// (sm80_panel_swizzle), ldmatrix (plain or .trans by each operand's
// major-ness) through tile::warp::copy, mma.sync through tile::warp::gemm.
// Copies of rows outside the group (or the tensor) read nothing and zero
// their shared memory (cp.async's src-size, PTX ISA 9.7.9.25), so a tile
// never mixes two groups; the ragged dimension is never the contiguous one
// of an operand (sm80_grouped_refusals), so a group's start needs no
// 16-byte alignment. Tiles of the pseudo-group (rows past the last end) and
// of empty groups in ragged K run no mainloop: they store zeros.
//
// Parameters: A, B, offsets (int32 x G), D (pointers), extent (u32: M in
// ragged M, K in ragged K). Everything else is compiled in.
#pragma once

#include <string>
#include <vector>

#include "group_schedule.hpp"
#include "grouped_gemm_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

inline constexpr const char* kSm80GroupedKernel = "grouped_gemm_sm80";

struct GroupedSm80Config {
  int tile_m = 128, tile_n = 128, tile_k = 32;
  int stages = 3;
  int warps_m = 2, warps_n = 2;
  int threads() const { return 32 * warps_m * warps_n; }
  // Dynamic shared memory: the stages of A and B tiles (bf16/f16).
  int shared_bytes() const { return stages * (tile_m + tile_n) * tile_k * 2; }
  std::string describe() const;  // "128x128x32 s3 w2x2"
  friend bool operator==(const GroupedSm80Config&, const GroupedSm80Config&) = default;
};

// The schedule the kernel walks for a problem under a configuration.
GroupScheduleOptions sm80_grouped_schedule(const GroupedGemmProblem& p, const GroupedSm80Config& c);

// Every reason the kernel cannot run the problem (the ragged dimension
// contiguous, a block-scaled operand, amax, index ranges).
std::vector<std::string> sm80_grouped_refusals(const GroupedGemmProblem& p);

// Throws OpsError for a configuration it cannot build.
ptx::Module build_sm80_grouped(const GroupedGemmProblem& p, const GroupedSm80Config& c);

}  // namespace warpforge::ops
