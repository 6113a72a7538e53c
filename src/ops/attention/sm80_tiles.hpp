// What the sm_80 attention kernels (forward, backward, decode) share: how a
// (rows x head_dim) tile of Q, K, V, O or dO sits in shared memory, its
// cp.async staging from global memory, the ldmatrix views of it that the
// mma.sync operands take, and the reuse of an accumulator as the next
// product's A operand (FlashAttention-2's P·V without a trip through shared
// memory).
//
// Shared layout: head_dim is cut into panels of 16 columns (32 bytes a row),
// one after another, each (rows x 16) row-major in the 32-byte swizzle
// (layout::SmemSwizzle::b32, Swizzle<1,3,3> on elements: a row's second
// 16-byte chunk trades places with its first in rows 4-7 of every 8). One
// ldmatrix phase reads 8 consecutive rows of one chunk column, which the
// swizzle spreads over all eight 16-byte bank groups (PTX ISA 9.7.14.5.15),
// and a 16-column panel is exactly one k-step of mma.m16n8k16, so the
// operand of any k-step is one panel's tile and needs no offset inside a
// swizzle repeat.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "warpforge/dsl.hpp"
#include "warpforge/layout/swizzle.hpp"
#include "warpforge/tile/register_tile.hpp"
#include "warpforge/tile/warp_copy.hpp"

namespace warpforge::ops::attention_sm80 {

// The panel swizzle, on 16-bit element offsets.
layout::Swizzle panel_swizzle();

// A (rows x head_dim) tile of 16-bit elements in shared memory as above.
struct PanelTile {
  dsl::Reg base;  // 32-bit shared address
  int rows = 0, head_dim = 0;

  int bytes() const { return rows * head_dim * 2; }
  // Rows [row0, row0 + 16·k) of panel `panel` (columns 16·panel ..) as
  // ldmatrix's source: row-major for an operand whose rows are the tile's,
  // column-major for one that reads the tile transposed. row0 is a multiple
  // of 8 (a swizzle repeat).
  tile::SharedTile panel_view(dsl::Kernel& k, int panel, int row0, bool row_major) const;
};

// Issues the cp.async copies of rows [0, rows) of a global tile into
// `dst`: row r starts at the u64 address row_address(r) emits (r a u32
// register). Rows at or past `rows_valid` (s32) are zero-filled from
// `fallback` (any readable address) and read nothing (PTX ISA 9.7.9.25,
// src-size 0). Pairs of threads read 32 contiguous bytes of a row and eight
// threads cover eight distinct bank groups; a thread's rows are computed
// once per call. Commits no group. `prefetch`: the copies' L2 prefetch size
// (a row's 16-byte pieces are copied by different instructions: with a
// row's size, its first miss fetches all of it).
void stage_rows(dsl::Kernel& k, const PanelTile& dst,
                const std::function<dsl::Reg(const dsl::Reg&)>& row_address, const dsl::Reg& fallback,
                const dsl::Reg& rows_valid, const dsl::Reg& tid, int threads,
                dsl::L2Prefetch prefetch = dsl::L2Prefetch::none);
// The same copies in another order, for rows scattered in memory (a paged
// KV cache): each warp instruction copies 128 contiguous bytes (a whole L2
// line) of each of 4 rows, where stage_rows copies 32 bytes of each of 16;
// the writes stay free of bank conflicts (8 lanes write 4 rows of one
// panel). A warp copies rows / warps consecutive rows, so row_address is
// called rows / (4·warps) times, in the same order for two tiles of one
// shape. Needs head_dim a multiple of 64 and rows of 4·warps.
void stage_rows_by_lines(dsl::Kernel& k, const PanelTile& dst,
                         const std::function<dsl::Reg(const dsl::Reg&)>& row_address, const dsl::Reg& fallback,
                         const dsl::Reg& rows_valid, const dsl::Reg& tid, int threads,
                         dsl::L2Prefetch prefetch = dsl::L2Prefetch::none);
// The same for a tile whose row r starts at `global` + r·`row_bytes` (u64).
void stage_rows(dsl::Kernel& k, const PanelTile& dst, const dsl::Reg& global,
                const dsl::Reg& row_bytes, const dsl::Reg& rows_valid, const dsl::Reg& tid,
                int threads);

// b·sb + h·sh + r·sr elements (u64): the (batch, head, row) offset of a
// tensor element, the indices u32 registers and the strides u64 ones.
dsl::Reg element_offset(dsl::Kernel& k, const dsl::Reg& b, const dsl::Reg& sb, const dsl::Reg& h,
                        const dsl::Reg& sh, const dsl::Reg& r, const dsl::Reg& sr);
// base + elements·bytes (u64).
dsl::Reg element_address(dsl::Kernel& k, const dsl::Reg& base, const dsl::Reg& elements, int bytes);

// One sequence's rows: its first row in the tensors and its length (s32).
// Varlen: cu_seqlens[b] and cu_seqlens[b + 1] - cu_seqlens[b]; dense: 0
// and `dense_length`.
struct Extent {
  dsl::Reg first, length;
};
Extent sequence_extent(dsl::Kernel& k, bool varlen, const dsl::Reg& cu_seqlens, const dsl::Reg& b,
                       const dsl::Reg& dense_length);

// The mma.sync m16n8k16 fragments (layout/mma_atoms.hpp).
tile::RegisterTile a_tile(dsl::Kernel& k, int rows, int cols, dsl::Type type, const std::string& name);
tile::RegisterTile b_tile(dsl::Kernel& k, int rows, int cols, dsl::Type type, const std::string& name);
tile::RegisterTile c_tile(dsl::Kernel& k, int rows, int cols, const std::string& name);

// acc = A·Bᵀ over head_dim (one mma.sync k-step a 16-column panel): A's 16
// rows are rows [0, 16) of `rows` (a warp's part of a tile), Bᵀ's
// acc.cols() rows those of `cols`; a_frag (16 x 16) and b_frag (16 x
// acc.cols()) hold one k-step's operands.
void panel_products(dsl::Kernel& k, const tile::RegisterTile& acc, const PanelTile& rows, const PanelTile& cols,
                    const tile::RegisterTile& a_frag, const tile::RegisterTile& b_frag);

// Packs columns [16·i, 16·i + 16) of the f32 accumulator `c` (rows x n) into
// the A operand `a[i]` (rows x 16, f16 or bf16), rounding to nearest: an
// m16n8k16 accumulator's lane holds the elements its A fragment needs
// (PTX ISA 9.7.14.5.14: C's (groupID, 2·tig + {0,1}) rows and columns are
// A's), so this is one cvt per register pair. Checked on the layouts.
void pack_accumulator_as_a(dsl::Kernel& k, const tile::RegisterTile& c,
                           const std::vector<tile::RegisterTile>& a);

// Stores a warp's 16-row accumulator parts (f32, of one layout) side by
// side to rows [0, 16) of a tile whose row 0 starts at `row0_address` (u64)
// and rows are `row_bytes` apart, as `in` (f16 or bf16), times `factor`
// when given; rows at or past `rows_valid` (s32) are left alone. Two
// adjacent columns a store (the accumulator's c0, c1; PTX ISA 9.7.14.5.14).
void store_rows(dsl::Kernel& k, const std::vector<tile::RegisterTile>& parts, const dsl::Reg& row0_address,
                const dsl::Reg& row_bytes, const dsl::Reg& rows_valid, dsl::Type in,
                const std::optional<dsl::Reg>& factor, const dsl::Reg& lane);

// Stores one f32 of each of the thread's two rows of a warp's 16 (its rows
// lane/4 and lane/4 + 8: `values` per row half) to rows [0, 16) of a
// column whose row 0 is at `row0_address` (u64), rows `row_bytes` apart;
// the first lane of each quad writes, rows at or past `rows_valid` not.
// Where first_row (s32) is given, rows before it are not stored and
// row0_address is that of row max(first_row, 0).
void store_row_values(dsl::Kernel& k, const dsl::Regs& values, const dsl::Reg& row0_address,
                      const dsl::Reg& row_bytes, const dsl::Reg& rows_valid, const dsl::Reg& lane,
                      const dsl::Reg* first_row = nullptr);

// For each accumulator value of `c`, the row (0..rows-1) it lies on, from
// the layout's value part (add the lane's row for the element's).
std::vector<std::int64_t> value_rows(const tile::RegisterTile& c);
std::vector<std::int64_t> value_cols(const tile::RegisterTile& c);

}  // namespace warpforge::ops::attention_sm80
