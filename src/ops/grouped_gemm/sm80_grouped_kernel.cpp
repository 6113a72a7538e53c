#include "sm80_grouped_kernel.hpp"

#include <bit>
#include <limits>
#include <optional>

#include "../gemm/sm80_kernel.hpp"
#include "grouped_store.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/tile/warp_copy.hpp"
#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::ops {
namespace {

using namespace dsl;
using runtime::DType;

bool power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

// How one operand's tile sits in a stage: `rows` x `cols` in memory order
// (cols the operand's contiguous index), in panels of `panel` columns, each
// swizzled by sm80_panel_swizzle (a panel is one warp's part of the tile
// where the columns are M or N, so that each warp's part starts a swizzle
// period; the whole row where they are K).
struct Staging {
  bool k_contiguous;
  int rows, cols, panel;
  int bytes() const { return rows * cols * 2; }
};

// Which tile coordinates the rows and columns of a staged tile are, and
// the bounds of each inside the matrix for one work item.
struct TileOrigin {
  Reg row0, col0;    // the tile's first row and column (memory order)
  Reg row_end;       // rows at or past it are outside (the group, or the matrix)
  std::int64_t col_end;  // columns at or past it are outside the matrix
};

// One operand's cp.async copies, thread by thread: the thread copies the
// 8-element pieces (t_row + j·row_step, t_col) of the staged tile, j < count.
class OperandCopies {
 public:
  OperandCopies(Kernel& k, const Staging& s, int threads, const Reg& tid, std::int64_t ld)
      : k_(k), s_(s), ld_(ld) {
    const int per_row = s.cols / 8;
    if (threads % per_row != 0 || s.rows % (threads / per_row) != 0)
      throw OpsError("sm80 grouped kernel: a " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                     " tile in 16-byte copies does not divide among " + std::to_string(threads) + " threads");
    row_step_ = threads / per_row;
    count_ = s.rows / row_step_;
    t_row_ = k.div(tid, imm(per_row));
    t_col_ = (tid - t_row_ * imm(per_row)) << 3u;
    // The pieces' shared offsets are the same for every tile: computed once.
    const layout::Swizzle swz = sm80_panel_swizzle(s.panel);
    const std::int64_t mask = ((std::int64_t{1} << swz.bits()) - 1) << swz.base();
    Reg panel = t_col_ >> imm(std::countr_zero(static_cast<unsigned>(s.panel)));
    Reg in_panel = t_col_ & imm(s.panel - 1);
    Reg panel_bytes = panel * imm(s.rows * s.panel * 2);
    for (int j = 0; j < count_; ++j) {
      Reg element = (t_row_ + imm(j * row_step_)) * imm(s.panel) + in_panel;
      Reg swizzled = element ^ ((element >> imm(swz.shift())) & imm(mask));
      dst_.push_back(panel_bytes + (swizzled << 1u));
    }
  }

  // Issues the copies of one tile into the stage at `stage` (shared), from
  // `matrix` (u64; its element (row, col) at matrix + (row·ld + col)·2),
  // `fallback` an address inside the tensor for the copies that read nothing.
  void issue(const Reg& stage, const Reg& matrix, const Reg& fallback, const TileOrigin& o) {
    Reg col = o.col0 + t_col_;
    Reg left = k_.reg(s32);
    k_.sub(left, imm(o.col_end), col);
    k_.min(left, left, 8);
    k_.max(left, left, 0);
    Reg col_bytes = left << 1u;
    for (int j = 0; j < count_; ++j) {
      Reg row = o.row0 + (t_row_ + imm(j * row_step_));
      Pred valid = row < o.row_end;
      Reg offset = k_.reg(u64);
      k_.mul_wide(offset, row, imm(2 * ld_));
      Reg wide_col = k_.reg(u64);
      k_.mul_wide(wide_col, col, 2u);
      Reg src = k_.selp(matrix + offset + wide_col, fallback, valid);
      Reg bytes = k_.selp(col_bytes, 0u, valid);
      k_.cp_async(CpAsyncCache::cg, 16, at(stage + dst_[static_cast<std::size_t>(j)]), at(src), Src(bytes));
    }
  }

 private:
  Kernel& k_;
  Staging s_;
  std::int64_t ld_;
  int row_step_ = 0, count_ = 0;
  Reg t_row_, t_col_;
  std::vector<Reg> dst_;
};

class Sm80Grouped {
 public:
  Sm80Grouped(const GroupedGemmProblem& p, const GroupedSm80Config& c)
      : p_(p), c_(c), k_(kSm80GroupedKernel, Target::sm_80) {}

  ptx::Module build() {
    const bool ragged_m = p_.form == GroupedForm::ragged_m;
    const Type ab = p_.a_dtype == DType::f16 ? f16 : bf16;
    const int warp_m = c_.tile_m / c_.warps_m, warp_n = c_.tile_n / c_.warps_n;
    Reg pa = k_.param_ptr("A", 16), pb = k_.param_ptr("B", 16), poffsets = k_.param_ptr("offsets", 4),
        pd = k_.param_ptr("D", 4);
    Reg extent = k_.param(u32, "extent");
    k_.reqntid(imm(c_.threads()));
    Shared smem = k_.dynamic_shared("stages", 128);
    const GroupScheduleOptions so = sm80_grouped_schedule(p_, c_);
    Shared table = k_.shared("group_table", so.table_bytes(), 4);

    Reg tid = k_.sreg(SReg::tid_x);
    GroupSchedule schedule(k_, so, poffsets, extent, tid, k_.address_of(table));

    // Staging: A is M x K, B is K x N; each kept in its memory order.
    const Staging sa = p_.a.cols_contiguous ? Staging{true, c_.tile_m, c_.tile_k, c_.tile_k}
                                            : Staging{false, c_.tile_k, c_.tile_m, warp_m};
    const Staging sb = p_.b.cols_contiguous ? Staging{false, c_.tile_k, c_.tile_n, warp_n}
                                            : Staging{true, c_.tile_n, c_.tile_k, c_.tile_k};
    OperandCopies copy_a(k_, sa, c_.threads(), tid, p_.a.ld), copy_b(k_, sb, c_.threads(), tid, p_.b.ld);
    const int stage_bytes = sa.bytes() + sb.bytes();
    Reg stages = k_.address_of(smem);

    Reg warp = tid >> 5u;
    Reg wm = warp & imm(c_.warps_m - 1), wn = warp >> imm(std::countr_zero(static_cast<unsigned>(c_.warps_m)));
    // Each warp's part of a staged tile (whole rows, or its own panel).
    Reg a_warp = wm * imm(warp_m * c_.tile_k * 2), b_warp = wn * imm(warp_n * c_.tile_k * 2);
    const auto atom = layout::mma_m16n8k16_f16();
    auto a_regs = tile::RegisterTile::allocate(k_, atom.a, warp_m, c_.tile_k, ab, "a");
    auto b_regs = tile::RegisterTile::allocate(k_, atom.b, c_.tile_k, warp_n, ab, "b");
    auto acc = tile::RegisterTile::allocate(k_, atom.c, warp_m, warp_n, f32, "acc");
    Reg lane = k_.sreg(SReg::laneid);
    tile::LaneCoords lc = tile::emit_lane_coords(k_, acc.steps(), lane);

    const std::int64_t tiles_m = (p_.m + c_.tile_m - 1) / c_.tile_m;
    schedule.for_each([&](const GroupWork& w) {
      // The tile: its corner, the rows inside, its K range and operands.
      Reg m0, n0, rows_end, k0, k_tiles, b_matrix = pb, d_matrix = pd;
      Pred real_group = w.group < imm(p_.groups);
      if (ragged_m) {
        m0 = w.begin + w.row_tile * imm(c_.tile_m);
        n0 = w.col * imm(c_.tile_n);
        rows_end = w.end;
        k0 = k_.mov(u32, 0u);
        // The pseudo-group's tiles run no mainloop (and never touch B past its groups).
        k_tiles = k_.selp(k_.mov(u32, imm((p_.k + c_.tile_k - 1) / c_.tile_k)), 0u, real_group);
        b_matrix = pb + group_offset(w.group, p_.b.batch * 2);
      } else {
        Reg tn = k_.div(w.col, imm(tiles_m));
        m0 = (w.col - tn * imm(tiles_m)) * imm(c_.tile_m);
        n0 = tn * imm(c_.tile_n);
        rows_end = k_.mov(u32, imm(p_.m));
        k0 = w.begin;
        k_tiles = k_.div(w.end - w.begin + imm(c_.tile_k - 1), imm(c_.tile_k));
        d_matrix = pd + group_offset(w.group, p_.d.batch * bits_of_d() / 8);
      }
      Reg k_end = ragged_m ? k_.mov(u32, imm(p_.k)) : w.end;
      // Tile kt's origins in both operands' memory order.
      auto origin_a = [&](const Reg& kt) {
        Reg kk = k0 + kt * imm(c_.tile_k);
        return sa.k_contiguous ? TileOrigin{m0, kk, rows_end, p_.k} : TileOrigin{kk, m0, k_end, p_.m};
      };
      auto origin_b = [&](const Reg& kt) {
        Reg kk = k0 + kt * imm(c_.tile_k);
        return sb.k_contiguous ? TileOrigin{n0, kk, k_.mov(u32, imm(p_.n)), p_.k}
                               : TileOrigin{kk, n0, k_end, p_.n};
      };
      auto issue = [&](const Reg& kt) {
        Reg stage = stages + remainder(kt, c_.stages) * imm(stage_bytes);
        k_.if_then(kt < k_tiles, [&] {
          copy_a.issue(stage, pa, pa, origin_a(kt));
          copy_b.issue(stage + imm(sa.bytes()), b_matrix, pb, origin_b(kt));
        });
        k_.cp_async_commit();  // an empty group past the last tile keeps the count
      };
      for (const Reg& r : acc.regs()) k_.mov(r, imm_f32(0.0f));
      for (int s = 0; s + 1 < c_.stages; ++s) issue(k_.mov(u32, imm(s)));
      k_.for_range(0u, k_tiles, 1u, [&](Reg kt) {
        // Tile kt has landed once at most stages - 2 newer groups are pending
        // (PTX ISA 9.7.9.27); the barrier shows every thread's copies and
        // frees the stage read by the step before.
        k_.cp_async_wait(c_.stages - 2);
        k_.bar_sync();
        issue(kt + imm(c_.stages - 1));
        Reg stage = stages + remainder(kt, c_.stages) * imm(stage_bytes);
        tile::warp::copy(k_, tile::SharedTile{stage + a_warp, sa.panel, sa.k_contiguous, sm80_panel_swizzle(sa.panel)},
                         a_regs);
        tile::warp::copy(
            k_, tile::SharedTile{stage + imm(sa.bytes()) + b_warp, sb.panel, !sb.k_contiguous, sm80_panel_swizzle(sb.panel)},
            b_regs);
        tile::warp::gemm(k_, acc, a_regs, b_regs, acc, 1.0f, 1.0f);
      });
      k_.cp_async_wait_all();
      k_.bar_sync();  // every warp is done with the stages before the next tile's copies
      store(acc, d_matrix, m0 + wm * imm(warp_m) + lc.row, n0 + wn * imm(warp_n) + lc.col, rows_end);
    });
    return k_.module();
  }

 private:
  int bits_of_d() const { return runtime::bits(p_.d_dtype); }

  Reg remainder(const Reg& x, int divisor) {
    Reg r = k_.reg(u32);
    k_.rem(r, x, imm(divisor));
    return r;
  }

  // group · bytes, as a u64 (a group's stride may pass 2^32 bytes).
  Reg group_offset(const Reg& group, std::int64_t bytes) {
    Reg wide = k_.reg(u64);
    k_.cvt(wide, group);
    return wide * Src(static_cast<std::uint64_t>(bytes));
  }

  // D = acc inside (rows_end, N): adjacent column pairs (PTX ISA
  // 9.7.14.5.14: c0, c1 at columns 2t, 2t + 1) in one store where D's rows
  // keep them 4-byte aligned.
  void store(const tile::RegisterTile& acc, const Reg& d, const Reg& row0, const Reg& col0, const Reg& rows_end) {
    const int bytes = bits_of_d() / 8;
    const bool pairs = p_.d.ld % 2 == 0 && p_.d.batch % 2 == 0;
    Reg row_base = k_.reg(u64), col_base = k_.reg(u64);
    k_.mul_wide(row_base, row0, imm(p_.d.ld * bytes));
    k_.mul_wide(col_base, col0, imm(bytes));
    Reg lane_d = d + row_base + col_base;
    for (std::int64_t v = 0; v < acc.steps().values(); v += 2) {
      const auto [r, c] = acc.steps().value_offset(v);
      Pred row_in = (row0 + imm(r)) < rows_end;
      store_d_pair(k_, p_.d_dtype, lane_d + Src(static_cast<std::uint64_t>((r * p_.d.ld + c) * bytes)),
                   acc.regs()[static_cast<std::size_t>(v)], acc.regs()[static_cast<std::size_t>(v + 1)],
                   row_in && ((col0 + imm(c)) < imm(p_.n)), row_in && ((col0 + imm(c + 1)) < imm(p_.n)), pairs);
    }
  }

  const GroupedGemmProblem& p_;
  GroupedSm80Config c_;
  Kernel k_;
};

}  // namespace

std::string GroupedSm80Config::describe() const {
  return std::to_string(tile_m) + "x" + std::to_string(tile_n) + "x" + std::to_string(tile_k) + " s" +
         std::to_string(stages) + " w" + std::to_string(warps_m) + "x" + std::to_string(warps_n);
}

GroupScheduleOptions sm80_grouped_schedule(const GroupedGemmProblem& p, const GroupedSm80Config& c) {
  GroupScheduleOptions o;
  o.groups = p.groups;
  o.ragged_rows = p.form == GroupedForm::ragged_m;
  o.rows_per_tile = c.tile_m;
  const std::int64_t tiles_n = (p.n + c.tile_n - 1) / c.tile_n;
  o.units_per_row = o.ragged_rows ? tiles_n : tiles_n * ((p.m + c.tile_m - 1) / c.tile_m);
  return o;
}

std::vector<std::string> sm80_grouped_refusals(const GroupedGemmProblem& p) {
  std::vector<std::string> why;
  if (p.packed_b || p.scaled_a)
    why.push_back("block-scaled operands: the sm80 kernel multiplies bf16 or f16 (the stream kernel takes packed B)");
  if (p.amax) why.push_back("amax: the sm80 kernel computes none (the block-scaled forms do)");
  // One group starts at row 0: its tiles' copies along a contiguous M stay aligned.
  if (p.form == GroupedForm::ragged_m && !p.a.cols_contiguous && p.m > 1 && p.groups > 1)
    why.push_back("A is m-major: in ragged M its rows are the groups, whose starts need not be 16-byte aligned, so "
                  "the sm80 kernel copies whole rows of A (make A's K contiguous)");
  if (p.form == GroupedForm::ragged_k && (p.a.cols_contiguous || !p.b.cols_contiguous) && p.k > 1)
    why.push_back("ragged K with K contiguous in " + std::string(p.a.cols_contiguous ? "A" : "B") +
                  ": the groups' K ranges start anywhere, so the sm80 kernel copies whole K rows of A (M contiguous) "
                  "and of B (N contiguous)");
  const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  if (p.m > limit || p.n > limit || p.k > limit || p.groups > limit)
    why.push_back("M, N, K or G above 2^31 - 1: the sm80 kernel indexes them with 32-bit registers");
  return why;
}

ptx::Module build_sm80_grouped(const GroupedGemmProblem& p, const GroupedSm80Config& c) {
  const int warp_m = c.tile_m / std::max(c.warps_m, 1), warp_n = c.tile_n / std::max(c.warps_n, 1);
  if (!power_of_two(c.tile_m) || !power_of_two(c.tile_n) || c.tile_k != 32 || !power_of_two(c.warps_m) ||
      !power_of_two(c.warps_n) || c.warps_m * c.warps_n > 8 || c.stages < 2 || c.stages > 5 || warp_m < 16 ||
      warp_n < 16 || warp_m > 64 || warp_n > 64)
    throw OpsError("sm80 grouped kernel: configuration " + c.describe() +
                   "; it takes power-of-two tiles with tile_k 32, at most 8 warps of 16 to 64 rows and columns "
                   "each, 2 to 5 stages");
  return Sm80Grouped(p, c).build();
}

}  // namespace warpforge::ops
