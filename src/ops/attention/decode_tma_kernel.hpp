// The TMA-fed decode kernel (sm_90a), a design on the warp-specialized
// template (tile/warp_specialized.hpp): one CTA per (split, KV head,
// sequence) as the cp.async kernel's (decode_kernel.hpp), whose four
// computing warps it shares (decode_warps.hpp), but fed by a producer warp
// instead of the warps' own copies:
//
//  - the producer warp reads the split's block-table entries a window of
//    blocks ahead (the next window's loads in flight while this one's pages
//    are asked for) and loads each block's K and V by TMA, one copy of
//    `page_rows` keys a page it touches (a 5D tensor map over the paged
//    cache: 64 elements of head_dim, the slot, the 64-element panel, the
//    KV head, the page), into a ring of `stages` slots on the template's
//    mbarrier pipeline. The box lands as the warps' 64-column panels in the
//    128-byte swizzle their ldmatrix reads (DecodeSpec::panel_width): a
//    box row is 128 bytes (TMA moved 32-byte rows at ~25 GB/s an SM).
//  - consumer warpgroup 0 stages Q, then per block waits for its slot, zeroes
//    V's rows past the split's last key in the block that holds it (a page's
//    unused slots may hold anything: 0·NaN is NaN), runs the block, frees
//    the slot (each thread arrives), and finishes as the cp.async kernel.
// More bytes in flight an SM with far fewer instructions: a block of 64 keys
// of head_dim 128 is two TMA copies a page, where the cp.async kernel
// issued 32 16-byte copies a thread.
#pragma once

#include <cstdint>

#include "decode_kernel.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

// Parameters: decode_kernel.hpp's, then map_k and map_v (128-byte tensor
// maps: dims {64, page_size, head_dim / 64, heads_kv, pages}, byte strides
// {slot, 128, head, page}, box {64, page_rows, head_dim / 64, 1, 1}, the
// 128-byte swizzle). Launch: grid (splits, heads_kv, batch), block
// spec.threads() (256), dynamic shared memory spec.shared_bytes().
ptx::Module build_decode_tma(const DecodeSpec& spec);
// Its dynamic shared memory (DecodeSpec::shared_bytes for a TMA spec).
std::uint32_t decode_tma_shared_bytes(const DecodeSpec& spec);

}  // namespace warpforge::ops
