// Cooperative-groups reductions: warp tiles, shuffles, reduce() and a
// block-level combination through shared memory.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__global__ void block_sum(const float* in, float* out, int n) {
  __shared__ float partial[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  float v = 0.f;
  for (int i = block.group_index().x * block.size() + block.thread_rank(); i < n; i += gridDim.x * block.size())
    v += in[i];
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    v = warp.thread_rank() < warp.meta_group_size() ? partial[warp.thread_rank()] : 0.f;
    for (int off = 16; off > 0; off /= 2) v += warp.shfl_down(v, off);
    if (warp.thread_rank() == 0) atomicAdd(out, v);
  }
}

__global__ void warp_max(const int* in, int* out) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  int v = in[threadIdx.x];
  int m = cg::reduce(tile, v, cg::greater<int>());
  unsigned ballot = tile.ballot(v == m);
  if (tile.thread_rank() == 0) out[threadIdx.x / 16] = m + __popc(ballot);
}
