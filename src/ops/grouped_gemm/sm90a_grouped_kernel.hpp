// The sm90a grouped kernel: bf16/f16 grouped GEMM on Hopper, in both forms
// (ragged M: the forward and dA = dD·Bᵀ; ragged K: dB = Xᵀ·dD), a design of
// the warp-specialized template (tile/warp_specialized.hpp).
//
// The template runs the roles (a producer warpgroup, two consumer
// warpgroups sharing each 128 x tile_n tile, 64 rows each), the mbarrier
// ring and the persistent loop; the design's work source is the group
// schedule (group_schedule.hpp: every CTA's table of the groups' tiles,
// built from the device offsets), whose items are tile (row tile of a
// group, N tile) with the group in tile.batch and the group's end row in
// extra[0]. Its load step brings A's 128 rows from the tile's first row
// (TMA: rows past the group's end are loaded, and past M zero-filled, but
// never stored) and the group's B tile (a rank-3 tensor map, the group its
// third coordinate); compute is wgmma m64nNk16 on the stage (the
// warpgroup mma of tile/warpgroup_mma.hpp); finish stores the
// accumulator's rows inside the group and columns inside N from registers
// (PTX ISA 9.7.15.5.1.1.1: warp w rows 16w + lane/4 (+8), columns
// 8j + 2(lane%4) (+1)). Rows past the last group's end are no work item:
// the consumers of every CTA zero them, grid-stride, before their first item.
//
// Either major of A and of B (wgmma reads K-major or MN-major tiles from
// shared memory: a layout, not another kernel): B (G, K, N) with K
// contiguous as torch._grouped_mm takes it, or N contiguous as its
// transpose in dA = dD·Bᵀ is. D row-major.
//
// Ragged K (D[g] = A[:, K range of g] · B[K range of g, :], G x M x N): an
// item is (group, M tile, N tile) of D[g], its k-blocks the group's K range
// in 64s from its first index (TMA boxes start anywhere); the last
// k-block's rows past the group's end belong to the next group, and the
// consumers zero them in shared memory before wgmma (A M-major and B
// N-major, where a K row is a 128-byte row of the tile); an empty group's
// D[g] is zeros. Parameters: map_a, map_b (128-byte tensor maps), [map_d
// (sm90a_grouped_tma_d)], D, offsets (pointers), extent (u32: M for ragged
// M, K for ragged K).
//
// Weight-only (B packed block-scaled codes, prepack_weights): the RS design
// (sm90a_grouped_rs.hpp) on the same path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "group_schedule.hpp"
#include "grouped_gemm_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

inline constexpr const char* kSm90aGroupedKernel = "grouped_gemm_sm90a";

struct GroupedSm90aConfig {
  int tile_n = 128;  // 64, 128 or 256; tile_m is 128 (two consumer warpgroups of 64 rows)
  int stages = 5;
  static constexpr int kTileM = 128, kTileK = 64;
  std::string describe() const;  // "128x128x64 s5"
  friend bool operator==(const GroupedSm90aConfig&, const GroupedSm90aConfig&) = default;
};

GroupScheduleOptions sm90a_grouped_schedule(const GroupedGemmProblem& p, const GroupedSm90aConfig& c);

// Whether D leaves by TMA store (ragged K, D's rows and groups 16-byte
// aligned): then the parameter map_d (D as (N, M, G) in boxes of 128 bytes
// x 64 rows, the 128-byte swizzle) follows map_b.
bool sm90a_grouped_tma_d(const GroupedGemmProblem& p);

// Dynamic shared memory the launch asks for.
std::uint32_t sm90a_grouped_shared_bytes(const GroupedGemmProblem& p, const GroupedSm90aConfig& c);

// Every reason the kernel cannot run the problem (the device aside).
std::vector<std::string> sm90a_grouped_refusals(const GroupedGemmProblem& p);

// Throws OpsError for a configuration it cannot build.
ptx::Module build_sm90a_grouped(const GroupedGemmProblem& p, const GroupedSm90aConfig& c);

}  // namespace warpforge::ops
