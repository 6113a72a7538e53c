// The attention mask (attention.hpp) on a warp's accumulator tile of scores,
// for the prefill kernels: the forward and dQ kernels hold S (rows are
// queries), the dK/dV kernel Sᵀ (rows are keys). Key j is visible from query
// i when j < len_k, j - i - diag <= window_right and j - i - diag >=
// -window_left (the bounded sides only); diag is the alignment's offset.
#pragma once

#include "warpforge/dsl.hpp"
#include "warpforge/tile/register_tile.hpp"

namespace warpforge::ops::attention_sm80 {

struct MaskGeometry {
  bool keys_are_rows = false;  // Sᵀ
  dsl::Reg query0, key0;       // s32: the query and key of the thread's value 0
  dsl::Reg len_k, diag;        // s32
  bool left = false, right = false;  // bounded sides
  dsl::Reg window_left, window_right;  // s32, read where bounded
};

// The mask's diagonal offset for a sequence (s32): 0 aligned top-left,
// len_k - len_q aligned bottom-right.
dsl::Reg mask_diagonal(dsl::Kernel& k, bool top_left, const dsl::Reg& len_q, const dsl::Reg& len_k);

// The blocks of `block_n` keys, [lo, hi) (s32, hi >= lo), that any of the
// query rows [m0, m0 + rows) sees (m0, rows s32): up to the last row's
// right edge, from the first row's left edge.
struct KeyBlocks {
  dsl::Reg lo, hi;
};
KeyBlocks key_blocks(dsl::Kernel& k, const MaskGeometry& g, const dsl::Reg& m0, const dsl::Reg& rows, int block_n);

// The blocks of `block_m` queries, [lo, hi) (s32, hi >= lo), of a sequence
// of len_q queries any of which sees one of the keys [n0, n0 + keys) (n0
// s32): from the first key's right edge to the last key's left edge (the
// backward's walk over the queries of a key block).
struct QueryBlockRange {
  dsl::Reg lo, hi;
};
QueryBlockRange query_blocks(dsl::Kernel& k, const MaskGeometry& g, const dsl::Reg& len_q, const dsl::Reg& n0, int keys,
                             int block_m);

// Sets the scores of `s` that the mask hides to -inf.
void apply_mask(dsl::Kernel& k, const tile::RegisterTile& s, const MaskGeometry& g);

// Whether the mask hides any pair of queries [q0, q0 + queries) and keys
// [k0, k0 + keys) (s32 registers; uniform over the CTA): keys past len_k,
// or a window side crossing the block.
dsl::Pred mask_cuts(const MaskGeometry& g, const dsl::Reg& q0, int queries, const dsl::Reg& k0, int keys);

}  // namespace warpforge::ops::attention_sm80
