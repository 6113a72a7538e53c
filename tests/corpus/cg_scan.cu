// Cooperative groups beyond reduce_cg.cu: a grid group with grid.sync(),
// tile partitions with inclusive/exclusive scans, a labeled partition and
// coalesced threads under divergence.
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>

namespace cg = cooperative_groups;

// Each block scans its values in 32-wide tiles, publishes its total, waits
// for the whole grid and adds the totals of the blocks before it.
__global__ void grid_prefix_sum(const int* in, int* out, int* block_totals) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ int warp_totals[32];
  const int v = in[grid.thread_rank()];
  const int inclusive = cg::inclusive_scan(warp, v);
  if (warp.thread_rank() == 31) warp_totals[warp.meta_group_rank()] = inclusive;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    int t = warp.thread_rank() < warp.meta_group_size() ? warp_totals[warp.thread_rank()] : 0;
    warp_totals[warp.thread_rank()] = cg::exclusive_scan(warp, t);
    if (warp.thread_rank() == warp.meta_group_size() - 1)
      block_totals[grid.block_rank()] = t + warp_totals[warp.thread_rank()];
  }
  block.sync();
  grid.sync();
  int before = 0;
  for (unsigned b = 0; b < grid.block_rank(); ++b) before += block_totals[b];
  out[grid.thread_rank()] = before + warp_totals[warp.meta_group_rank()] + inclusive;
}

// Threads with equal keys form a group; the odd values take another branch,
// where the active threads count themselves.
__global__ void group_by_key(const int* keys, int* leaders, int* odd_counts) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  const int key = keys[threadIdx.x];
  cg::coalesced_group same = cg::labeled_partition(warp, key);
  if (same.thread_rank() == 0) leaders[threadIdx.x] = static_cast<int>(same.size());
  if (key & 1) {
    cg::coalesced_group odd = cg::coalesced_threads();
    cg::thread_block_tile<4> quad = cg::tiled_partition<4>(warp);
    odd_counts[threadIdx.x] = static_cast<int>(odd.size()) + cg::inclusive_scan(quad, 1);
  }
}
