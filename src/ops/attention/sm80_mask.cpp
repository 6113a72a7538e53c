#include "sm80_mask.hpp"

#include <limits>

namespace warpforge::ops::attention_sm80 {

using namespace dsl;

void apply_mask(Kernel& k, const tile::RegisterTile& s, const MaskGeometry& g) {
  // t = key - query - diag at value 0; value v moves the key by dk and the
  // query by dq, so it is visible when keys_left > dk, right_room >= dk - dq
  // and left_room >= dq - dk.
  Reg t = g.key0 - g.query0 - g.diag;
  Reg keys_left = g.len_k - g.key0;
  Reg right_room, left_room;
  if (g.right) right_room = g.window_right - t;
  if (g.left) left_room = t + g.window_left;
  const Src minus_infinity = imm_f32(-std::numeric_limits<float>::infinity());
  for (std::int64_t v = 0; v < s.steps().values(); ++v) {
    const auto [dr, dc] = s.steps().value_offset(v);
    const std::int64_t dk = g.keys_are_rows ? dr : dc, dq = g.keys_are_rows ? dc : dr;
    Pred seen = keys_left > dk;
    if (g.right) seen = seen && (right_room >= dk - dq);
    if (g.left) seen = seen && (left_room >= dq - dk);
    const Reg& x = s.regs()[static_cast<std::size_t>(v)];
    k.selp(x, x, minus_infinity, seen);
  }
}

Reg mask_diagonal(Kernel& k, bool top_left, const Reg& len_q, const Reg& len_k) {
  if (top_left) return k.mov(s32, 0);
  return len_k - len_q;
}

KeyBlocks key_blocks(Kernel& k, const MaskGeometry& g, const Reg& m0, const Reg& rows, int block_n) {
  Reg hi = k.mov(s32, g.len_k), lo = k.mov(s32, 0);
  if (g.right) k.min(hi, hi, m0 + rows + g.diag + g.window_right);  // m0 + rows: one past the last row
  k.max(hi, hi, 0);
  if (g.left) k.max(lo, m0 + g.diag - g.window_left, 0);
  Reg first = k.div(lo, block_n);
  return {first, k.max(k.div(hi + (block_n - 1), block_n), first)};
}

QueryBlockRange query_blocks(Kernel& k, const MaskGeometry& g, const Reg& len_q, const Reg& n0, int keys, int block_m) {
  // Query i sees key j when j - i - diag <= window_right and >= -window_left.
  Reg lo = k.mov(s32, 0), hi = k.mov(s32, len_q);
  if (g.right) k.max(lo, n0 - g.diag - g.window_right, 0);
  if (g.left) k.min(hi, hi, n0 + keys + g.window_left - g.diag);
  Reg first = k.div(lo, block_m);
  return {first, k.max(k.div(k.max(hi, 0) + (block_m - 1), block_m), first)};
}

Pred mask_cuts(const MaskGeometry& g, const Reg& q0, int queries, const Reg& k0, int keys) {
  Pred cut = k0 + keys > g.len_k;
  // The first query sees the fewest keys on the right, the last on the left.
  if (g.right) cut = cut || (k0 + (keys - 1) > q0 + g.diag + g.window_right);
  if (g.left) cut = cut || (k0 < q0 + (queries - 1) + g.diag - g.window_left);
  return cut;
}

}  // namespace warpforge::ops::attention_sm80
