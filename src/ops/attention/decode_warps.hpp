// What the two decode kernels (decode_kernel.hpp: cp.async; decode_tma_kernel.hpp:
// TMA-fed, warp-specialized) share: their parameters, a split's keys, Q's
// staging, and the work of the four warps that compute: each block's
// scores, mask, online softmax and P·V over the warp's keys, then the
// merge of the warps sharing a row tile, the rows' output (O and lse, or
// the split's partials) and the combine of the splits by the CTA that
// finishes last.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "decode_kernel.hpp"
#include "sm80_softmax.hpp"
#include "sm80_tiles.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/tile/register_tile.hpp"

namespace warpforge::ops::decode {

// The kernel parameters in their order (decode_kernel.hpp says which).
struct Params {
  dsl::Reg q, k, v, table, lens, o, lse, partial;
  std::vector<dsl::Reg> sq, sk, sv, so, slse;
  dsl::Reg table_row, page_size, table_width, splits, heads_q, scale_log2, window_left;
};
Params declare_params(dsl::Kernel& k);

// The keys of split `split` of a sequence of kv_len keys (s32): its blocks
// of BN keys are interleaved with the other splits' (block j of the split
// starts at key start + j·step, step = splits·BN), up to key_end (kv_len);
// the diagonal (token t sees keys up to diag + t) and the blocks to read.
// Without a sliding window a split's first block, split·BN, does not depend
// on kv_len (first_block_key), so its pages can be asked for while kv_len
// comes.
struct SplitKeys {
  dsl::Reg key_end, diag, start, step, blocks;
  dsl::Reg key_of(dsl::Kernel& k, const dsl::Reg& j) const;  // block j's first key
};
dsl::Reg first_block_key(dsl::Kernel& k, const DecodeSpec& s, const dsl::Reg& split);
SplitKeys split_keys(dsl::Kernel& k, const DecodeSpec& s, const Params& p, const dsl::Reg& kv_len,
                     const dsl::Reg& split);

// Q's rows of (sequence b, KV head g) into sQ (panels of the spec's width,
// rows past Q's zero) by cp.async from the four warps (tid 0..127); commits
// no group.
void stage_q(dsl::Kernel& k, const DecodeSpec& s, const Params& p, const attention_sm80::PanelTile& sQ,
             const dsl::Reg& b, const dsl::Reg& g, const dsl::Reg& tid);

// The four computing warps (tid 0..127): warp w takes row tile
// w / key_groups and keys (w % key_groups)·KW .. + KW of each block.
class Warps {
 public:
  // Q's fragments read from sQ (staged and visible to these warps).
  Warps(dsl::Kernel& k, const DecodeSpec& s, const Params& p, const attention_sm80::PanelTile& sQ,
        const dsl::Reg& tid);

  const dsl::Reg& key_group() const { return key_group_; }
  // One block of keys from key0: sK, sV are the warp's keys' rows (K and V,
  // panels of the spec's width `rows` rows apart, the warp's first key at
  // row 0).
  void block(const attention_sm80::PanelTile& sK, const attention_sm80::PanelTile& sV, const dsl::Reg& key0,
             const SplitKeys& keys);
  // After the last block: the warps of a row tile merged through shared
  // memory at `merge` (merge_bytes(), free by then), the rows written, and
  // with split_output the combine (the CTA that counts last). `sync` is a
  // barrier of the four warps; `flag` 4 bytes of shared memory.
  void finish(const dsl::Reg& merge, const dsl::Reg& flag, const std::function<void()>& sync);
  static int merge_bytes(const DecodeSpec& s);

 private:
  void write_rows(int share, int shares);
  std::int64_t column_of(int panel, int v) const;  // value v's column of O (the lane's)

  dsl::Kernel& k_;
  const DecodeSpec& s_;
  const Params& p_;
  dsl::Reg tid_, lane_, warp_, row_tile_, key_group_, b_, g_, split_;
  std::vector<tile::RegisterTile> q_frag_, acc_o_, p_frag_;
  std::optional<tile::RegisterTile> acc_s_, k_frag_, v_frag_;
  std::optional<attention_sm80::OnlineSoftmax> softmax_;
  tile::LaneCoords lc_;
  dsl::Regs token_, lse_;
};

}  // namespace warpforge::ops::decode
