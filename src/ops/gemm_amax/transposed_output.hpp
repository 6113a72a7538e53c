// The output side of the GemmAmax kernels that compute Cᵀ = B·Aᵀ, B's rows
// on the MMA's M side and A's tokens on its N side (the skinny kernel's
// mma.sync m16n8k16, the swapped kernel's wgmma m64nNk16): their
// accumulators come in 16-row x 8-token tiles of four f32 per thread laid
// out alike (PTX ISA 9.7.14.5.8 for mma m16n8 C; 9.7.15.5.1.1 for wgmma's
// D, whose N/8 column blocks repeat that layout per 16-row warp slice):
// register q holds B row g + 8(q / 2) and token 2t + q % 2 of its tile,
// g = lane / 4, t = lane % 4.
//
// - split_k_reduce: split-K through a global workspace. Every CTA of a
//   unit stores its partial sums (thread-major, coalesced), then the last
//   of the unit's CTAs to count itself in (atom.add behind gpu-scope
//   fences, PTX ISA 8.9 memory consistency) adds all of them in split
//   order, so every run gives the same bits whichever CTA arrives last, and
//   clears the counter, so a launch leaves the workspace as it found it
//   (CUDA graphs replay it).
// - cluster_split_reduce: split-K inside a thread-block cluster whose CTAs
//   are the unit's splits (cluster rank = split): each warp's accumulators
//   belong to one CTA (warp % splits); every warp stores its partial sums
//   into the owner's shared memory (mapa + st.shared::cluster, PTX ISA
//   9.7.9.19, 9.7.9.10), and after a cluster barrier (release/acquire,
//   9.7.13.3) the owner adds them in split order, the same order and so
//   the same bits as split_k_reduce. No workspace, gpu-scope fence or
//   counter: the partials go SM to SM instead of through L2.
// - store_transposed: C[token][row] stored (f32, or converted to bf16/f16
//   with round to nearest) and max |C| folded as the sign-cleared bits
//   (unsigned order is value order, a NaN on top) per thread, per warp
//   (redux.sync), then one red.global.max.u32 per warp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gemm_amax_problem.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/tile/named_barrier.hpp"

namespace warpforge::ops {

// Where the accumulator tiles sit in C: acc[i · token_tiles + j] is row
// tile i (16 rows from row0 + 16i) and token tile j (8 tokens from
// token0 + 8j), row0 the thread's row g, token0 its token 2t.
struct TransposedTiles {
  const std::vector<dsl::Regs>& acc;
  int row_tiles, token_tiles;
  dsl::Reg row0, token0;
};

void store_transposed(dsl::Kernel& k, const GemmAmaxProblem& p, const TransposedTiles& tiles, const dsl::Reg& batch,
                      const dsl::Reg& c, const dsl::Reg& amax, const dsl::Reg& lane);

struct SplitKReduce {
  int threads;         // the threads that hold accumulators, thread 0..threads-1
  dsl::Reg thread;     // this one's index among them
  dsl::Reg unit;       // the output tile (all of whose splits run in this launch)
  dsl::Reg split;      // this CTA's split, 0..splits-1
  int splits;
  dsl::Reg workspace;  // u64: partial slots, then a u32 counter per unit at counter_offset
  std::uint64_t counter_offset;
  dsl::Reg flag;       // a shared u32 that passes "last" from thread 0 to the others
  // The barrier the accumulating threads share: bar.sync 0 (every thread
  // of the CTA) when absent.
  std::optional<tile::NamedBarrier> barrier;
};

// Partial slots of one unit: splits x (floats per thread x threads) f32.
inline std::uint64_t split_k_slot_bytes(int threads, std::size_t acc_tiles) {
  return static_cast<std::uint64_t>(acc_tiles) * 4 * 4 * static_cast<std::uint64_t>(threads);
}

// Runs `finish` (the epilogue) in the unit's last CTA, with `acc` holding
// the sum of every split's partials.
void split_k_reduce(dsl::Kernel& k, std::vector<dsl::Regs>& acc, const SplitKReduce& r,
                    const std::function<void()>& finish);

// The most splits a cluster takes: the portable cluster size.
inline constexpr int kMaxClusterSplits = 8;
// Throws OpsError naming `kernel` when `splits` exceed kMaxClusterSplits.
void require_cluster_splits(const std::string& kernel, int splits);

struct ClusterSplitReduce {
  int splits;        // the cluster's CTAs, one split each
  dsl::Reg split;    // this CTA's split: its rank in the cluster
  int warps;         // the warps that hold accumulators
  dsl::Reg warp;     // this one's index among them
  dsl::Reg lane;
  dsl::Reg slots;    // shared address (16-byte aligned) of cluster_split_slot_bytes that
                     // nothing else uses from the first cluster barrier on
};

// One warp's 4-float accumulator tile in a slot: 16 bytes a lane, contiguous.
inline constexpr std::uint32_t kClusterSlotTileBytes = 32 * 16;
// The slot region: for each warp its owner holds `splits` partials.
inline std::uint32_t cluster_split_slot_bytes(int splits, int warps, std::size_t acc_tiles) {
  const int owned = (warps + splits - 1) / splits;  // warps a CTA owns, at most
  return static_cast<std::uint32_t>(owned * splits * acc_tiles * kClusterSlotTileBytes);
}

// Runs `finish` (the epilogue) in each warp's owner, with `acc` holding
// the sum of every split's partials of that warp's rows. Every thread of
// every CTA of the cluster meets the reduction's two cluster barriers:
// the accumulating warps here, the CTA's others through
// join_cluster_split_reduce. The first barrier also stands for "every
// CTA's main loop is over", so the slots may overlay its pipeline stages.
void cluster_split_reduce(dsl::Kernel& k, std::vector<dsl::Regs>& acc, const ClusterSplitReduce& r,
                          const std::function<void()>& finish);
void join_cluster_split_reduce(dsl::Kernel& k);

}  // namespace warpforge::ops
