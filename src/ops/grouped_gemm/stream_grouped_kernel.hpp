// The stream kernel: grouped GEMM of bf16 tokens against packed
// block-scaled expert weights (weight-only), for the few tokens a group of
// decode, where a grouped GEMM is bound by reading each active expert's
// weights once (Marlin's and Machete's design, on mma.sync).
//
// It computes Dᵀ = B·Aᵀ: the weights' rows (N) fill the mma's 16-row side
// and a group's tokens its 8-wide side. Persistent over the groups' tiles
// (group_schedule.hpp: a unit is `tokens` tokens of one group against one
// CTA's rows of N; the pseudo-group's units store zero rows), each unit's
// K split over `splits` work items (CTAs) so that every SM streams when few
// experts are active. A work item walks its chunks (256 codes of K) through
// a ring of `stages` shared-memory stages filled by cp.async: every warp
// its own rows of the group's packed weights (PackedWeightStream), every
// warp some of the unit's tokens' A rows — warp-wide copies of a row's 512
// bytes of the chunk, rows inside the group only, K past its end reading
// nothing (zeros; rows past the group's end are zeroed once an item), put
// where the weights' fragment order wants them: [step pair][token][t] x 16
// bytes holds A[token][k0 + 64t + 8·pair .. + 8), the b0, b1 of steps 2·pair
// and 2·pair + 1 of lane t (PackedWeightStream's K order; odd pairs swap
// each couple of tokens: a_slot). One wait and one
// barrier a chunk (A is shared), the copies of chunk c + stages - 1 issued
// before chunk c's mma.
//
// Not a design of the warp-specialized template (tile/warp_specialized.hpp):
// every warp both copies its rows (cp.async) and multiplies them, so there
// are no roles to specialize, and the ring's stages are per-warp copies
// waited on by one barrier a chunk, not an mbarrier pipeline. A producer warp
// filling a deeper ring by bulk copies would make it one (session 10's
// measurements: docs/PERFORMANCE.md, the stream kernel's bound).
//
// The splits add their partial sums in split order (deterministic):
// through the workspace (split_k_reduce), the last split of a unit storing
// D.
// D is f32, or rounded to nearest bf16/f16; with amax, max |D| folded in.
//
// Parameters: A (bf16, rows of `a_ld` elements), B (packed codes), SFB
// (packed scales), offsets (int32 x G), D, then amax (with amax) and
// workspace (with splits > 1), then M (u32). Target sm_90a: the exact
// conversions multiply bf16x2 (mul.bf16x2, PTX ISA 9.7.4.2).
#pragma once

#include <cstdint>
#include <string>

#include "group_schedule.hpp"
#include "grouped_gemm_problem.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

inline constexpr const char* kStreamGroupedKernel = "grouped_gemm_stream";

struct StreamGroupedTiling {
  int warps = 4;      // per CTA
  int row_tiles = 2;  // 16-row tiles of N per warp
  int tokens = 8;     // tokens of a group per unit: 8, 16, 32 or 64
  int splits = 1;     // work items (K ranges) per unit
  // CTAs an SM asked for (0: as many as the shared memory holds, at most
  // 4 and 16 warps); never more than the shared memory holds.
  int ctas_per_sm = 0;
  int stages = 4;     // chunks in flight
  std::int64_t a_ld = 0;  // A's row stride in elements (the tensor's, or the bf16 copy's)
  int threads() const { return 32 * warps; }
  int cta_rows() const { return 16 * warps * row_tiles; }
  std::string describe() const;  // "128 rows x 8 tokens (4 warps x 2 row tiles), 4 stages"
  friend bool operator==(const StreamGroupedTiling&, const StreamGroupedTiling&) = default;
};

GroupScheduleOptions stream_grouped_schedule(const GroupedGemmProblem& p, const StreamGroupedTiling& t);

// Bytes of one stage and of the kernel's dynamic shared memory.
std::int64_t stream_grouped_stage_bytes(const GroupedGemmProblem& p, const StreamGroupedTiling& t);
std::int64_t stream_grouped_shared_bytes(const GroupedGemmProblem& p, const StreamGroupedTiling& t);

// Persistent CTAs an SM: as many as sm_90's shared memory holds, at most 4
// and 16 warps (so at least 128 registers a thread), or the tiling's
// ctas_per_sm where the shared memory holds them. The kernel asks ptxas for
// them (.minnctapersm), which caps its registers at 64K / (CTAs x threads):
// left to itself the driver's JIT gave the NVFP4 kernel 215 registers, 2
// CTAs an SM where the shared memory held 3 (docs/PERFORMANCE.md).
std::int64_t stream_grouped_ctas_per_sm(const GroupedGemmProblem& p, const StreamGroupedTiling& t);

// Workspace of the split-K sums (0 without splits): partial
// slots of every unit there can be, then their counters.
std::size_t stream_grouped_split_bytes(const GroupedGemmProblem& p, const StreamGroupedTiling& t);

// Throws OpsError for a tiling it cannot build.
ptx::Module build_stream_grouped(const GroupedGemmProblem& p, const StreamGroupedTiling& t);

}  // namespace warpforge::ops
