#include "sm80_tiles.hpp"

#include "sm80_softmax.hpp"

#include <bit>
#include <map>

#include "warpforge/error.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::ops::attention_sm80 {

using namespace dsl;

layout::Swizzle panel_swizzle() {
  return layout::smem_swizzle(layout::SmemSwizzle::b32, 2);
}

tile::SharedTile PanelTile::panel_view(Kernel& /*k*/, int panel, int row0, bool row_major) const {
  // A panel is rows x 16 elements; a repeat of the swizzle is 8 rows of it.
  return tile::SharedTile{base + (panel * rows * 32 + row0 * 32), 16, row_major, panel_swizzle()};
}

void stage_rows(Kernel& k, const PanelTile& dst, const std::function<Reg(const Reg&)>& row_address,
                const Reg& fallback, const Reg& rows_valid, const Reg& tid, int threads, L2Prefetch prefetch) {
  const int chunks = dst.rows * dst.head_dim / 8;  // 16-byte pieces
  if (threads % 2 || chunks % threads || (dst.rows & (dst.rows - 1)))
    throw OpsError("attention stage_rows: " + std::to_string(dst.rows) + " rows of " +
                   std::to_string(dst.head_dim) + " do not divide among " + std::to_string(threads) +
                   " threads in 16-byte pieces (rows must be a power of two)");
  const layout::Swizzle swz = panel_swizzle();
  const std::int64_t mask = ((std::int64_t{1} << swz.bits()) - 1) << swz.base();
  const int row_bits = std::countr_zero(static_cast<unsigned>(dst.rows));
  const int pairs_per_pass = threads / 2;
  // Thread t copies half (t & 1) of piece pair (t >> 1) + j·threads/2, pairs
  // numbered down the rows of panel 0, then panel 1, ...: its row advances
  // by threads/2 mod rows and its panel by (threads/2) / rows a pass.
  Reg half = tid & 1;
  Reg pair0 = tid >> 1;
  Reg half_bytes = half << 4;
  std::map<int, std::pair<Reg, Pred>> rows;  // row step -> (row address + half's bytes, valid)
  for (int j = 0; j < chunks / threads; ++j) {
    const int step = (j * pairs_per_pass) % dst.rows;
    Reg pair = pair0 + j * pairs_per_pass;
    Reg row = pair & (dst.rows - 1);
    Reg panel = pair >> row_bits;
    auto it = rows.find(step);
    if (it == rows.end()) {
      Reg start = k.reg(u64), half64 = k.reg(u64);
      k.cvt(u64, u32, half64, half_bytes);
      k.add(start, row_address(row), half64);
      it = rows.emplace(step, std::pair{start, row.as(s32) < rows_valid}).first;
    }
    const auto& [start, valid] = it->second;
    Reg element = (row << 4) + (half << 3);
    Reg swizzled = element ^ ((element >> swz.shift()) & mask);
    Reg dst_address = dst.base + (panel * (dst.rows * 32)) + (swizzled << 1);
    Reg column_bytes = k.reg(u64);
    k.mul_wide(column_bytes, panel, 32);
    Reg src = start + column_bytes;
    Reg from = k.selp(src, fallback, valid);
    Reg bytes = k.reg(u32);
    k.selp(bytes, 16, 0, valid);
    k.cp_async(CpAsyncCache::cg, 16, at(dst_address), at(from), Src(bytes), prefetch);
  }
}

void stage_rows_by_lines(Kernel& k, const PanelTile& dst, const std::function<Reg(const Reg&)>& row_address,
                         const Reg& fallback, const Reg& rows_valid, const Reg& tid, int threads, L2Prefetch prefetch) {
  const int warps = threads / 32, panels = dst.head_dim / 16;
  if (threads % 32 || panels % 4 || dst.rows % (4 * warps))
    throw OpsError("attention stage_rows_by_lines: " + std::to_string(dst.rows) + " rows of " +
                   std::to_string(dst.head_dim) + " among " + std::to_string(threads) +
                   " threads; it needs head_dim a multiple of 64 and rows a multiple of 4 per warp");
  const layout::Swizzle swz = panel_swizzle();
  const std::int64_t mask = ((std::int64_t{1} << swz.bits()) - 1) << swz.base();
  const int quads = dst.rows / (4 * warps);  // each warp's groups of 4 rows
  // Lane l: half l & 1 (16 bytes) of row (l >> 1) & 3 of the quad, panel
  // (l >> 3) of each group of 4 panels: 4 rows x 128 bytes an instruction.
  Reg lane = tid & 31, warp = tid >> 5;
  Reg half = lane & 1, row_in_quad = (lane >> 1) & 3, panel_in_group = lane >> 3;
  Reg half_bytes = k.reg(u64);
  k.cvt(u64, u32, half_bytes, half << 4);
  for (int u = 0; u < quads; ++u) {
    Reg row = warp * (4 * quads) + (4 * u) + row_in_quad;
    Reg start = row_address(row) + half_bytes;
    Pred valid = row.as(s32) < rows_valid;
    Reg element = (row << 4) + (half << 3);
    Reg swizzled = element ^ ((element >> swz.shift()) & mask);
    for (int g = 0; g < panels / 4; ++g) {
      Reg panel = panel_in_group + 4 * g;
      Reg dst_address = dst.base + (panel * (dst.rows * 32)) + (swizzled << 1);
      Reg column_bytes = k.reg(u64);
      k.mul_wide(column_bytes, panel, 32);
      Reg from = k.selp(start + column_bytes, fallback, valid);
      Reg bytes = k.reg(u32);
      k.selp(bytes, 16, 0, valid);
      k.cp_async(CpAsyncCache::cg, 16, at(dst_address), at(from), Src(bytes), prefetch);
    }
  }
}

void stage_rows(Kernel& k, const PanelTile& dst, const Reg& global, const Reg& row_bytes,
                const Reg& rows_valid, const Reg& tid, int threads) {
  stage_rows(
      k, dst,
      [&](const Reg& row) {
        Reg row64 = k.reg(u64), start = k.reg(u64);
        k.cvt(u64, u32, row64, row);
        k.mad(start, row64, row_bytes, global);
        return start;
      },
      global, rows_valid, tid, threads);
}

Reg element_offset(Kernel& k, const Reg& b, const Reg& sb, const Reg& h, const Reg& sh, const Reg& r,
                   const Reg& sr) {
  Reg off = k.reg(u64), part = k.reg(u64);
  k.cvt(u64, u32, part, b);
  k.mul(off, part, sb);
  k.cvt(u64, u32, part, h);
  k.mad(off, part, sh, off);
  k.cvt(u64, u32, part, r);
  k.mad(off, part, sr, off);
  return off;
}

Reg element_address(Kernel& k, const Reg& base, const Reg& elements, int bytes) {
  Reg out = k.reg(u64);
  k.mad(out, elements, bytes, base);
  return out;
}

Extent sequence_extent(Kernel& k, bool varlen, const Reg& cu_seqlens, const Reg& b, const Reg& dense_length) {
  Extent e{k.reg(s32), k.reg(s32)};
  if (!varlen) {
    k.mov(e.first, 0);
    k.mov(e.length, dense_length.as(s32));
    return e;
  }
  Reg at_b = k.reg(u64);
  k.mul_wide(at_b, b, 4);
  Reg p = cu_seqlens + at_b;
  Reg end = k.reg(s32);
  k.ld(Space::global, s32, e.first, at(p));
  k.ld(Space::global, s32, end, at(p, 4));
  k.sub(e.length, end, e.first);
  return e;
}

tile::RegisterTile a_tile(Kernel& k, int rows, int cols, Type type, const std::string& name) {
  static const auto atom = layout::mma_m16n8k16_f16();
  return tile::RegisterTile::allocate(k, atom.a, rows, cols, type, name);
}
tile::RegisterTile b_tile(Kernel& k, int rows, int cols, Type type, const std::string& name) {
  static const auto atom = layout::mma_m16n8k16_f16();
  return tile::RegisterTile::allocate(k, atom.b, rows, cols, type, name);
}
tile::RegisterTile c_tile(Kernel& k, int rows, int cols, const std::string& name) {
  static const auto atom = layout::mma_m16n8k16_f16();
  return tile::RegisterTile::allocate(k, atom.c, rows, cols, f32, name);
}

void panel_products(Kernel& k, const tile::RegisterTile& acc, const PanelTile& rows, const PanelTile& cols,
                    const tile::RegisterTile& a_frag, const tile::RegisterTile& b_frag) {
  for (int panel = 0; panel < rows.head_dim / 16; ++panel) {
    tile::warp::copy(k, rows.panel_view(k, panel, 0, true), a_frag);
    tile::warp::copy(k, cols.panel_view(k, panel, 0, false), b_frag);
    if (panel == 0) tile::warp::gemm(k, acc, a_frag, b_frag, std::nullopt, 1.0f, 0.0f);
    else tile::warp::gemm(k, acc, a_frag, b_frag, acc, 1.0f, 1.0f);
  }
}

void pack_accumulator_as_a(Kernel& k, const tile::RegisterTile& c,
                           const std::vector<tile::RegisterTile>& a) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> c_value;
  for (std::int64_t v = 0; v < c.steps().values(); ++v)
    c_value[c.steps().value_offset(v)] = static_cast<std::size_t>(v);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const tile::RegisterTile& t = a[i];
    for (std::int64_t lane = 0; lane < 32; ++lane)
      if (t.steps().lane_offset(lane) != c.steps().lane_offset(lane))
        throw OpsError("pack_accumulator_as_a: " + t.describe() + " and " + c.describe() +
                       " give lane " + std::to_string(lane) + " different elements");
    const Type packed = t.dtype() == f16 ? f16x2 : bf16x2;
    for (std::size_t r = 0; r < t.regs().size(); ++r) {
      std::size_t src[2];
      for (int half = 0; half < 2; ++half) {
        auto [row, col] = t.steps().value_offset(static_cast<std::int64_t>(2 * r + half));
        auto it = c_value.find({row, col + 16 * static_cast<std::int64_t>(i)});
        if (it == c_value.end())
          throw OpsError("pack_accumulator_as_a: " + c.describe() + " holds no element (" +
                         std::to_string(row) + ", " + std::to_string(col + 16 * std::int64_t(i)) +
                         ") in the lane that " + t.describe() + " needs it in");
        src[half] = it->second;
      }
      k.cvt_pack(packed, t.regs()[r], c.regs()[src[1]], c.regs()[src[0]]);
    }
  }
}

std::vector<std::int64_t> value_rows(const tile::RegisterTile& c) {
  std::vector<std::int64_t> rows;
  for (std::int64_t v = 0; v < c.steps().values(); ++v) rows.push_back(c.steps().value_offset(v).first);
  return rows;
}

std::vector<std::int64_t> value_cols(const tile::RegisterTile& c) {
  std::vector<std::int64_t> cols;
  for (std::int64_t v = 0; v < c.steps().values(); ++v) cols.push_back(c.steps().value_offset(v).second);
  return cols;
}

void store_rows(Kernel& k, const std::vector<tile::RegisterTile>& parts, const Reg& row0_address,
                const Reg& row_bytes, const Reg& rows_valid, Type in, const std::optional<Reg>& factor,
                const Reg& lane) {
  const tile::LaneCoords lc = tile::emit_lane_coords(k, parts[0].steps(), lane);
  const auto half_of = row_halves(parts[0]);
  for (int half = 0; half < 2; ++half) {
    Reg row = lc.row + 8 * half;
    Reg row_offset = k.reg(u64), col_offset = k.reg(u64);
    k.mul_wide(row_offset, row, 1);
    k.mul(row_offset, row_offset, row_bytes);
    k.mul_wide(col_offset, lc.col, 2);
    Reg out = row0_address + row_offset + col_offset;
    k.guarded(row.as(s32) < rows_valid, [&] {
      std::int64_t first_col = 0;  // of part `panel`
      for (std::size_t panel = 0; panel < parts.size(); first_col += parts[panel].cols(), ++panel)
        for (std::size_t v = 0; v + 1 < half_of.size(); v += 2) {
          if (half_of[v] != half) continue;
          const auto col = parts[panel].steps().value_offset(static_cast<std::int64_t>(v)).second;
          Reg x0 = parts[panel].regs()[v], x1 = parts[panel].regs()[v + 1];
          if (factor) {
            x0 = k.reg(f32), x1 = k.reg(f32);
            k.mul(x0, parts[panel].regs()[v], *factor);
            k.mul(x1, parts[panel].regs()[v + 1], *factor);
          }
          Reg packed = k.reg(b32);
          k.cvt_pack(in == f16 ? f16x2 : bf16x2, packed, x1, x0);
          k.st(Space::global, b32, at(out, (first_col + col) * 2), packed);
        }
    });
  }
}

void store_row_values(Kernel& k, const Regs& values, const Reg& row0_address, const Reg& row_bytes,
                      const Reg& rows_valid, const Reg& lane, const Reg* first_row) {
  for (int half = 0; half < 2; ++half) {
    Reg row = (lane >> 2) + 8 * half;
    Reg offset = k.reg(u64);
    k.mul_wide(offset, first_row ? row - k.max(*first_row, 0).as(u32) : row, 1);
    k.mul(offset, offset, row_bytes);
    Pred writer = (row.as(s32) < rows_valid) && ((lane & 3) == 0);
    if (first_row) writer = writer && row.as(s32) >= *first_row;
    Reg address = row0_address + offset;  // unguarded (sm90a_forward_kernel.cpp's store says why)
    k.guarded(writer, [&] { k.st(Space::global, f32, at(address), values[half]); });
  }
}

}  // namespace warpforge::ops::attention_sm80
