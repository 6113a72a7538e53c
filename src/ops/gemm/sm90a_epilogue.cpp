#include "sm90a_epilogue.hpp"

#include <string>

#include "c_element.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/smem_swizzle.hpp"

namespace warpforge::ops {

using namespace dsl;

namespace {

constexpr std::uint32_t kRow = kSm90aRow;
// The 128-byte mode on byte offsets, Swizzle<3,4,3>: TMA's and wgmma's.
const layout::Swizzle kSwizzle128 = layout::smem_swizzle(layout::SmemSwizzle::b128, 1);

}  // namespace

void Sm90aEpilogue::begin() {
  if (s_.amax) thread_max_ = k_.mov(u32, 0u);
}

void Sm90aEpilogue::end(const Pred& leader, const Reg& amax) {
  if (s_.amax) {
    Reg warp_max = k_.reg(u32);
    k_.redux_sync(Redux::max, warp_max, thread_max_);
    k_.if_then((tid_ & 31u) == 0u, [&] { k_.red(Space::global, AtomOp::max, u32, at(amax), warp_max); });
  }
  k_.if_then(leader, [&] { k_.bulk_wait_group(0); });
}

Type sm90a_dsl_type(runtime::DType t) {
  switch (t) {
    case runtime::DType::bf16: return Type::bf16;
    case runtime::DType::f16: return Type::f16;
    case runtime::DType::f32: return Type::f32;
    default: throw OpsError("sm90a gemm: no kernel type for " + std::string(runtime::name(t)));
  }
}

// alpha·acc[i], alpha·acc[i + 1] (+ beta·C) for accumulator pair i of this
// thread: row `row` of the tile, columns 8·(i/4) + 2·(lane%4) + {0, 1}; with
// amax, the magnitudes of those inside D folded into the thread's maximum
// (past M or N a sum may be inf x 0 = NaN from A's or B's zero fill).
std::pair<Reg, Reg> Sm90aEpilogue::output_pair(const Regs& acc, int i, const tile::Tile& t, const Reg& row,
                                            const Reg& lane) {
  Reg v0 = k_.reg(f32), v1 = k_.reg(f32);
  k_.mul(v0, acc[i], o_.alpha);
  k_.mul(v1, acc[i + 1], o_.alpha);
  if (!s_.has_c && !s_.amax) return {v0, v1};
  Reg grow = t.m0 + row, gcol = t.n0 + (i / 4) * 8 + ((lane & 3) << 1);
  Reg offset;
  if (s_.has_c) {
    offset = k_.reg(u64);
    Reg tmp = k_.reg(u64);
    k_.mul_wide(offset, t.batch, 1);
    k_.mul(offset, offset, o_.c_bs);
    k_.mul_wide(tmp, grow, 1);
    k_.mad(offset, tmp, o_.c_rs, offset);
  }
  for (int e = 0; e < 2; ++e) {
    Reg col = gcol + e;
    const Reg& v = e == 0 ? v0 : v1;
    Pred inside = (grow < o_.m) && (col < o_.n);
    if (s_.has_c) add_c(v, offset, col, inside);
    if (s_.amax) {
      Reg bits = k_.reg(b32), kept = k_.reg(u32);
      k_.mov(bits, v);
      k_.selp(kept, bits.as(u32) & 0x7fffffffu, 0u, inside);
      k_.max(thread_max_, thread_max_, kept);
    }
  }
  return {v0, v1};
}

// v += beta·C at column `col` of the row whose offset in C (elements) is
// `row_offset`, where the element is inside C.
void Sm90aEpilogue::add_c(const Reg& v, const Reg& row_offset, const Reg& col, const Pred& inside) {
  const int es = runtime::bits(s_.d) / 8;
  Reg at_col = k_.reg(u64);
  k_.mul_wide(at_col, col, 1);
  k_.mad(at_col, at_col, o_.c_cs, row_offset);
  Reg address = o_.c + at_col * es;
  k_.if_then(inside, [&] { k_.fma(v, load_c_element(k_, s_.d, address), o_.beta, v); });
}

// The output tile converted to D's type and written into 128-byte-swizzled
// boxes of 64 rows (the layout the TMA store reads with the same swizzle:
// 16-byte chunk c of row r lands at chunk c ^ (r % 8)), then stored by TMA.
// 16-bit D goes through stmatrix, four 8x8 matrices (16 rows x 16 columns)
// per instruction: the accumulator's fragment is stmatrix's (PTX ISA
// 9.7.14.5.16), and lane l gives the row address of matrix l / 8.
void Sm90aEpilogue::store(const std::vector<Regs>& accs, const tile::Tile& t, const Reg& rows0, const Reg& cw,
                          const Pred& leader) {
  const int es = runtime::bits(s_.d) / 8;
  const int box_cols = sm90a_store_box_cols(s_);
  const int width = s_.epilogue_width();
  const int boxed = width / box_cols * box_cols;  // columns of a chunk through whole store boxes
  const std::uint32_t half_bytes = 64 * boxed * es;  // one 64-row accumulator's boxes of a chunk
  Reg epi = base_ + smem_.epilogue + cw * smem_.epilogue_per_consumer;
  const tile::NamedBarrier chunk_barrier = barriers_.of(cw);
  Reg lane = tid_ & 31, g = lane >> 2;
  Reg warp_row = ((tid_ >> 5) & 3) * 16;  // this warp's first row in the accumulator's 64
  Reg row0 = warp_row + g;                // this thread's first accumulator row
  const Type dt = sm90a_dsl_type(s_.d);
  // Chunks of `width` columns through one buffer: each waits until the store
  // before it has read the buffer.
  for (int col0 = 0; col0 < s_.tile_n; col0 += width) {
    k_.if_then(leader, [&] { k_.bulk_wait_group_read(0); });
    chunk_barrier.sync();
    for (std::size_t h = 0; h < accs.size(); ++h) {
      const Regs& acc = accs[h];
      Reg half = epi + static_cast<std::uint32_t>(h) * half_bytes;
      Reg tile_row0 = rows0 + 64 * static_cast<int>(h);  // the accumulator's first row in the tile
      if (es == 4) {
        Reg col_byte = (lane & 3) * 8;  // the thread's first column's byte in each 8-column group
        for (int i = col0 / 2; i < (col0 + width) / 2; i += 2) {
          const int byte0 = ((i / 4) * 8 - col0) * es;  // the 8-column group's first byte in the chunk row
          Reg row = row0 + 8 * ((i / 2) % 2);
          auto [v0, v1] = output_pair(acc, i, t, tile_row0 + row, lane);
          Reg byte = col_byte + (byte0 % kRow);
          Reg chunk = (byte >> 4) ^ g;  // row % 8 == g: rows are 16·warp + g + 8·half
          Reg address = half + (byte0 / kRow) * (64 * kRow) + row * kRow + (chunk << 4) + (byte & 15);
          k_.st(Space::shared, f32, at(address), Regs{v0, v1});
        }
      } else {
        // Matrix q of each stmatrix is rows 8·(q % 2).. of column group q / 2.
        Reg row_in_matrix = lane & 7;
        Reg row_address = half + (warp_row + ((lane >> 3) & 1) * 8 + row_in_matrix) * kRow;
        Reg group_of_lane = lane >> 4;
        for (int j = col0 / 16; j < (col0 + boxed) / 16; ++j) {
          Regs packed;
          for (int q = 0; q < 4; ++q) {
            const int i = 2 * (4 * j + q);
            auto [v0, v1] = output_pair(acc, i, t, tile_row0 + row0 + 8 * (q % 2), lane);
            packed.push_back(k_.reg(b32));
            k_.cvt_pack(dt == Type::bf16 ? bf16x2 : f16x2, packed.back(), v1, v0);
          }
          // 8-column groups of 16 bytes, 8 per 128-byte box row; a box (64
          // rows of 128 bytes) is 2^13 bytes. The row's phase is its row in the matrix.
          Reg group = group_of_lane + (2 * j - col0 / 8);
          Reg address =
              row_address + ((group >> 3) << 13) + tile::swizzled_chunk(k_, kSwizzle128, group, row_in_matrix);
          k_.stmatrix(at(address), packed);
        }
        if (boxed < width) store_tail(acc, col0 + boxed, col0 + width, t, tile_row0, row0, lane);
      }
    }
    k_.fence_proxy_async_shared();  // the TMA store reads what ordinary stores wrote
    chunk_barrier.sync();
    k_.if_then(leader, [&] {
      for (std::size_t h = 0; h < accs.size(); ++h)
        for (int bx = 0; bx < width / box_cols; ++bx)
          k_.tma_store(o_.map_d,
                       {t.n0 + (col0 + bx * box_cols), t.m0 + rows0 + 64 * static_cast<int>(h), t.batch},
                       at(epi, static_cast<std::uint32_t>(h) * half_bytes + bx * 64 * kRow));
      k_.bulk_commit_group();
    });
  }
}

// The tile's columns [col0, col1) past its last whole store box (a 16-bit D
// and tile_n an odd multiple of 32): each thread stores its pairs of columns straight
// from registers, a 32-bit store where both lie inside D, else the one that
// does. A box of 64 columns there would overwrite the next tile's (TMA clips
// only at the tensor's edge), and they are a fifth of a tile at most.
void Sm90aEpilogue::store_tail(const Regs& acc, int col0, int col1, const tile::Tile& t, const Reg& rows0,
                            const Reg& row0, const Reg& lane) {
  const int es = runtime::bits(s_.d) / 8;
  const Type packed_type = sm90a_dsl_type(s_.d) == Type::bf16 ? bf16x2 : f16x2;
  Reg batch_offset = k_.reg(u64);
  k_.mul_wide(batch_offset, t.batch, 1);
  k_.mul(batch_offset, batch_offset, o_.d_bs);
  for (int i = col0 / 2; i < col1 / 2; i += 2) {
    Reg row = rows0 + row0 + 8 * ((i / 2) % 2);
    auto [v0, v1] = output_pair(acc, i, t, row, lane);
    Reg packed = k_.reg(b32);
    k_.cvt_pack(packed_type, packed, v1, v0);
    Reg grow = t.m0 + row, gcol = t.n0 + (i / 4) * 8 + ((lane & 3) << 1);
    Reg offset = k_.reg(u64), col = k_.reg(u64);
    k_.mul_wide(offset, grow, 1);
    k_.mad(offset, offset, o_.d_rs, batch_offset);
    k_.mul_wide(col, gcol, 1);
    Reg address = o_.d + (offset + col) * es;
    Pred row_inside = grow < o_.m;
    k_.if_else(
        row_inside && (gcol + 1 < o_.n), [&] { k_.st(Space::global, b32, at(address), packed); },
        [&] {
          k_.if_then(row_inside && (gcol < o_.n), [&] {
            Reg low = k_.reg(u16);
            k_.cvt(u16, u32, low, packed);  // the low half: column gcol's value
            k_.st(Space::global, u16, at(address), low);
          });
        });
  }
}

}  // namespace warpforge::ops
