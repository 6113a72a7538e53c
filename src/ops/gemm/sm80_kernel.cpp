#include "sm80_kernel.hpp"

#include <algorithm>
#include <bit>
#include <map>

#include "warpforge/dsl.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/tile/warp_copy.hpp"
#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::ops {
namespace {

using namespace dsl;
using runtime::DType;

bool power_of_two(int x) {
  return x > 0 && (x & (x - 1)) == 0;
}

// Elements spanned by one swizzle repeat: offsets that differ by a multiple
// of it are swizzled alike.
std::int64_t swizzle_period(const layout::Swizzle& s) {
  return std::int64_t{1} << (s.base() + s.shift() + s.bits());
}

// One operand (A or B) as it is staged: `rows` x `cols` in shared memory per
// stage, cols along the operand's contiguous global dimension, split into
// panels of `panel` columns, each swizzled by sm80_panel_swizzle. A panel is
// the whole row where cols are K (the warps' parts are whole rows apart);
// where cols are M (N) it is one warp's extent, so that every warp's part of
// the tile starts a swizzle repeat and tile::warp::copy can swizzle offsets
// relative to it.
struct Staging {
  bool k_contiguous;  // cols are K (A row-major, B column-major)
  int rows, cols, panel, vector;
  int tile_bytes() const { return rows * cols * 2; }
};

Staging staging_a(const Sm80KernelSpec& s) {
  const GemmConfig& c = s.config;
  const int warp_m = c.tile_m / c.warps_m;
  if (s.a_row_major) return {true, c.tile_m, c.tile_k, c.tile_k, s.a_vector};
  return {false, c.tile_k, c.tile_m, warp_m, s.a_vector};
}

Staging staging_b(const Sm80KernelSpec& s) {
  const GemmConfig& c = s.config;
  const int warp_n = c.tile_n / c.warps_n;
  if (!s.b_row_major) return {true, c.tile_n, c.tile_k, c.tile_k, s.b_vector};
  return {false, c.tile_k, c.tile_n, warp_n, s.b_vector};
}

std::string staging_refusals(const char* operand, const Staging& st, int threads) {
  const int per_row = st.cols / st.vector;
  if (st.cols % st.vector || threads % per_row || (st.rows * per_row) % threads)
    return std::string(operand) + " tile " + std::to_string(st.rows) + "x" +
           std::to_string(st.cols) + " in copies of " + std::to_string(st.vector) +
           " elements does not divide among " + std::to_string(threads) +
           " threads (each thread copies whole rows' worth of copies)";
  return {};
}

// The per-thread state of one operand's global -> shared copies. Thread t
// copies the `vector`-element pieces at (t_row + j·row_step, t_col) of the
// staged tile for j = 0 .. count-1.
struct OperandCopier {
  Staging st;
  Reg base;            // the matrix's first element (for clamping)
  Reg pointer;         // global address of piece j = 0 of the next k-tile
  Reg row_step_bytes;  // bytes between piece j and j + 1
  Reg k_advance;       // bytes from one k-tile to the next
  Reg row_remaining;   // rows of the global matrix left from piece 0's row (s32)
  Reg col_remaining;   // columns left from the thread's column (s32)
  Reg swizzle_input;   // element offset (within the panel) of piece 0 before swizzling
  Reg panel_offset;    // byte offset of the thread's panel
  int row_step = 0, count = 0, tile_k = 0;

  // Issues the copies of the next k-tile into `tile_base` (a 32-bit shared
  // address), then moves the state on by one k-tile.
  void issue(Kernel& k, const Reg& tile_base) {
    const layout::Swizzle swz = sm80_panel_swizzle(st.panel);
    const std::int64_t mask = ((std::int64_t{1} << swz.bits()) - 1) << swz.base();
    const bool uniform = (std::int64_t{row_step} * st.panel) % swizzle_period(swz) == 0;
    // Bytes of the thread's column range that lie inside the matrix.
    Reg in_cols = k.reg(s32);
    k.min(in_cols, col_remaining, st.vector);
    k.max(in_cols, in_cols, 0);
    Pred any_col = in_cols > 0;
    Reg col_bytes = in_cols << 1;

    Reg swizzled0;
    if (uniform) swizzled0 = swizzle(swizzle_input, swz, mask);
    Reg p = pointer;
    for (int j = 0; j < count; ++j) {
      const std::int64_t row_elements = std::int64_t{j} * row_step * st.panel;
      Reg element =
          uniform ? swizzled0 + row_elements : swizzle(swizzle_input + row_elements, swz, mask);
      Reg dst = tile_base + panel_offset + (element << 1);
      Pred valid = (row_remaining > j * row_step) && any_col;
      // Out-of-matrix pieces read nothing (src_bytes 0: the whole piece is
      // zero-filled, PTX ISA 9.7.9.25) from a clamped, in-bounds address.
      Reg src = k.reg(u64);
      k.selp(src, p, base, valid);
      if (st.vector >= 2) {
        Reg bytes = k.reg(u32);
        k.selp(bytes, col_bytes, 0, valid);
        k.cp_async(st.vector == 8 ? CpAsyncCache::cg : CpAsyncCache::ca, st.vector * 2, at(dst),
                   at(src), Src(bytes));
      } else {
        Reg v = k.reg(b16);
        k.mov(v, 0);
        k.guarded(valid, [&] { k.ld(Space::global, b16, v, at(src)); });
        k.st(Space::shared, b16, at(dst), v);
      }
      if (j + 1 < count) p = p + row_step_bytes;
    }
    k.add(pointer, pointer, k_advance);
    if (st.k_contiguous)
      k.sub(col_remaining, col_remaining, tile_k);
    else
      k.sub(row_remaining, row_remaining, tile_k);
  }

  // swizzle(x) = x ^ ((x >> S) & mask) (layout/swizzle.hpp), three instructions.
  static Reg swizzle(const Reg& x, const layout::Swizzle& swz, std::int64_t mask) {
    return x ^ ((x >> swz.shift()) & mask);
  }
};

// Emits the copier's setup. `batch_base` is the matrix's first element in
// this CTA's batch; `ld` its leading dimension (u32); `mn_origin` the CTA's
// first row of A (column of B); `mn_extent` M (N); `k_extent` K.
OperandCopier make_copier(Kernel& k, const Staging& st, int threads, int tile_k, const Reg& tid,
                          const Reg& batch_base, const Reg& ld, const Reg& mn_origin,
                          const Reg& mn_extent, const Reg& k_extent) {
  OperandCopier c;
  c.st = st;
  c.tile_k = tile_k;
  const int per_row = st.cols / st.vector;
  c.row_step = threads / per_row;
  c.count = st.rows / c.row_step;
  c.base = batch_base;

  Reg t_row = k.reg(u32), t_col = k.reg(u32);
  k.div(t_row, tid, per_row);
  k.rem(t_col, tid, per_row);
  t_col = t_col * st.vector;
  // Global coordinates of piece 0 in k-tile 0: (row, col) of the matrix in
  // memory order (row = the strided index, col = the contiguous one).
  Reg g_row = st.k_contiguous ? mn_origin + t_row : t_row;
  Reg g_col = st.k_contiguous ? t_col : mn_origin + t_col;
  const Reg& row_extent = st.k_contiguous ? mn_extent : k_extent;
  const Reg& col_extent = st.k_contiguous ? k_extent : mn_extent;
  c.row_remaining = k.reg(s32);
  k.sub(c.row_remaining, row_extent, g_row);
  c.col_remaining = k.reg(s32);
  k.sub(c.col_remaining, col_extent, g_col);

  Reg row_elems = k.reg(u64), col_elems = k.reg(u64);
  k.mul_wide(row_elems, g_row, ld);
  k.mul_wide(col_elems, g_col, 1);
  Reg elems = row_elems + col_elems;
  c.pointer = k.reg(u64);
  k.mad(c.pointer, elems, 2, batch_base);
  c.row_step_bytes = k.reg(u64);
  k.mul_wide(c.row_step_bytes, ld, 2 * c.row_step);
  c.k_advance = k.reg(u64);
  if (st.k_contiguous)
    k.mov(c.k_advance, 2 * tile_k);
  else
    k.mul_wide(c.k_advance, ld, 2 * tile_k);

  // Shared placement: panel index and the in-panel element offset of piece 0.
  Reg panel = k.reg(u32), in_panel = k.reg(u32);
  k.div(panel, t_col, st.panel);
  k.rem(in_panel, t_col, st.panel);
  c.panel_offset = panel * (st.rows * st.panel * 2);
  c.swizzle_input = t_row * st.panel + in_panel;
  return c;
}

// Epilogue access to C or D: element (row, col) of the CTA's batch at
// lane_base + offset(row - lane_row, col - lane_col).
struct EpilogueMatrix {
  Reg lane_base;  // u64 global address of the lane's element (lane_row, lane_col)
  Reg ld;         // u32
  bool row_major;
  int bytes;
  std::map<std::int64_t, Reg> strided;  // strided-index offset -> bytes

  Reg address(Kernel& k, std::int64_t row, std::int64_t col) {
    const std::int64_t s = row_major ? row : col, c = row_major ? col : row;
    auto it = strided.find(s);
    if (it == strided.end()) {
      Reg off = k.reg(u64);
      k.mul_wide(off, ld, s * bytes);
      it = strided.emplace(s, lane_base + off).first;
    }
    return it->second + c * bytes;
  }
};

EpilogueMatrix make_epilogue_matrix(Kernel& k, const Reg& batch_base, const Reg& ld, bool row_major,
                                    int bytes, const Reg& row, const Reg& col) {
  Reg strided = k.reg(u64), contiguous = k.reg(u64);
  k.mul_wide(strided, row_major ? row : col, ld);
  k.mul_wide(contiguous, row_major ? col : row, 1);
  Reg elems = strided + contiguous;
  Reg base = k.reg(u64);
  k.mad(base, elems, bytes, batch_base);
  return {base, ld, row_major, bytes, {}};
}

int element_bytes(DType t) {
  return runtime::bits(t) / 8;
}

// Loads element(s) of C as f32: one, or two adjacent ones (a pair).
void load_c(Kernel& k, DType t, const Reg& addr, const Regs& out) {
  if (t == DType::f32) {
    if (out.size() == 2)
      k.ld(Space::global, f32, out, at(addr));
    else
      k.ld(Space::global, f32, out[0], at(addr));
    return;
  }
  if (out.size() == 2) {
    Reg x = k.reg(b32);
    k.ld(Space::global, b32, x, at(addr));
    if (t == DType::f16) {
      Reg lo = k.reg(b16), hi = k.reg(b16);
      k.unpack({lo, hi}, x);
      k.cvt(f32, f16, out[0], lo);
      k.cvt(f32, f16, out[1], hi);
    } else {
      // bf16 -> f32 is exact as a 16-bit shift (bf16 is the upper half of a
      // binary32); cvt.f32.bf16 needs sm_90 (PTX ISA 9.7.9.21).
      Reg lo = x << 16, hi = x & 0xffff0000u;
      k.mov(out[0], lo.as(f32));
      k.mov(out[1], hi.as(f32));
    }
    return;
  }
  Reg h = k.reg(b16);
  k.ld(Space::global, b16, h, at(addr));
  if (t == DType::f16) {
    k.cvt(f32, f16, out[0], h);
  } else {
    Reg wide = k.reg(u32);
    k.cvt(u32, u16, wide, h);
    Reg bits = wide << 16;
    k.mov(out[0], bits.as(f32));
  }
}

// Stores one value or an adjacent pair, converted from f32 to `t`.
void store_d(Kernel& k, DType t, const Reg& addr, const Regs& v) {
  if (t == DType::f32) {
    if (v.size() == 2)
      k.st(Space::global, f32, at(addr), v);
    else
      k.st(Space::global, f32, at(addr), v[0]);
    return;
  }
  const Type packed = t == DType::f16 ? f16x2 : bf16x2;
  const Type single = t == DType::f16 ? f16 : bf16;
  if (v.size() == 2) {
    Reg x = k.reg(b32);
    k.cvt_pack(packed, x, v[1], v[0]);
    k.st(Space::global, b32, at(addr), x);
  } else {
    Reg h = k.reg(b16);
    k.cvt(single, f32, h, v[0], {Round::rn});
    k.st(Space::global, b16, at(addr), h);
  }
}

}  // namespace

layout::Swizzle sm80_panel_swizzle(int panel) {
  const int e = std::countr_zero(static_cast<unsigned>(panel));
  return layout::Swizzle(std::min(3, e - 3), 3, std::max(3, e - 3));
}

std::string Sm80KernelSpec::kernel_name() const {
  auto major = [](bool row) { return row ? 'r' : 'c'; };
  std::string name = "warpforge_gemm_sm80_" + std::string(runtime::name(ab_dtype)) + "_" +
                     std::string(runtime::name(d_dtype)) + "_" + major(a_row_major) +
                     major(b_row_major) +
                     (has_c ? std::string(1, major(c_row_major)) : std::string("x")) +
                     major(d_row_major) + "_v" + std::to_string(a_vector) +
                     std::to_string(b_vector) + (c_pairs ? "p" : "s") + (d_pairs ? "p" : "s") +
                     "_" + std::to_string(config.tile_m) + "x" + std::to_string(config.tile_n) +
                     "x" + std::to_string(config.tile_k) + "s" + std::to_string(config.stages) +
                     "w" + std::to_string(config.warps_m) + "x" + std::to_string(config.warps_n);
  return name;
}

namespace {

// The widest copy (8, 4, 2 or 1 elements of 2 bytes) whose every address is
// aligned to its size: cp.async needs the source aligned to the copy size
// (PTX ISA 9.7.9.25), and every piece starts at base + row·ld + a multiple of
// 8 elements (+ batch·batch_stride).
int copy_vector(const MatrixLayout& m, std::int64_t l) {
  for (int vector : {8, 4, 2}) {
    const std::int64_t bytes = 2 * vector;
    if (m.base_alignment % bytes == 0 && (2 * m.ld) % bytes == 0 &&
        (l == 1 || (2 * m.batch_stride) % bytes == 0))
      return vector;
  }
  return 1;
}

// Whether two adjacent elements of a row-major C/D row can move as one access.
bool pairs(const MatrixLayout& m, std::int64_t l, int element_bytes) {
  const std::int64_t bytes = 2 * element_bytes;
  return m.row_major && m.base_alignment % bytes == 0 && (element_bytes * m.ld) % bytes == 0 &&
         (l == 1 || (element_bytes * m.batch_stride) % bytes == 0);
}

}  // namespace

Sm80KernelSpec sm80_spec(const GemmProblem& p, const GemmConfig& config) {
  Sm80KernelSpec s;
  s.ab_dtype = p.ab_dtype;
  s.d_dtype = p.d_dtype;
  s.a_row_major = p.a.row_major;
  s.b_row_major = p.b.row_major;
  s.d_row_major = p.d.row_major;
  s.has_c = p.has_c;
  s.c_row_major = p.has_c ? p.c.row_major : true;
  s.a_vector = copy_vector(p.a, p.l);
  s.b_vector = copy_vector(p.b, p.l);
  const int bytes = element_bytes(p.d_dtype);
  s.d_pairs = pairs(p.d, p.l, bytes);
  s.c_pairs = p.has_c && pairs(p.c, p.l, bytes);
  s.config = config;
  return s;
}

std::vector<std::string> sm80_config_refusals(const GemmConfig& c) {
  std::vector<std::string> why;
  auto dims = [&](const char* name, int value, int atom) {
    if (!power_of_two(value) || value < atom || value > 256)
      why.push_back(std::string(name) + " = " + std::to_string(value) +
                    "; the sm80 kernel takes a power of two from " + std::to_string(atom) +
                    " to 256");
  };
  dims("tile_m", c.tile_m, 16);
  dims("tile_n", c.tile_n, 16);
  dims("tile_k", c.tile_k, 16);
  if (!power_of_two(c.warps_m) || !power_of_two(c.warps_n) || c.warps_m * c.warps_n > 8)
    why.push_back("warp grid " + std::to_string(c.warps_m) + "x" + std::to_string(c.warps_n) +
                  "; the sm80 kernel takes powers of two with at most 8 warps");
  if (c.stages < 2 || c.stages > 5)
    why.push_back("stages = " + std::to_string(c.stages) +
                  "; the sm80 kernel pipelines 2 to 5 stages");
  if (!why.empty()) return why;
  const int warp_m = c.tile_m / c.warps_m, warp_n = c.tile_n / c.warps_n;
  if (warp_m < 16 || warp_n < 16 || warp_m > 128 || warp_n > 128)
    why.push_back("warp tile " + std::to_string(warp_m) + "x" + std::to_string(warp_n) + " (tile " +
                  std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) + " over warps " +
                  std::to_string(c.warps_m) + "x" + std::to_string(c.warps_n) +
                  "); each side must be 16 to 128");
  else if (warp_m * warp_n / 32 + (warp_m + warp_n) * c.tile_k / 64 > 192)
    why.push_back(
        "warp tile " + std::to_string(warp_m) + "x" + std::to_string(warp_n) + "x" +
        std::to_string(c.tile_k) + " holds " +
        std::to_string(warp_m * warp_n / 32 + (warp_m + warp_n) * c.tile_k / 64) +
        " registers of accumulators and operands per thread; at most 192 leave room for addresses "
        "within the 255-register limit");
  // The copies of the widest and narrowest kinds must divide among the threads.
  const int threads = c.warps_m * c.warps_n * 32;
  Sm80KernelSpec spec;
  spec.config = c;
  for (bool row : {true, false})
    for (int vector : {8, 1}) {
      spec.a_row_major = spec.b_row_major = row;
      spec.a_vector = spec.b_vector = vector;
      for (auto s : {staging_refusals("A", staging_a(spec), threads),
                     staging_refusals("B", staging_b(spec), threads)})
        if (!s.empty() && std::find(why.begin(), why.end(), s) == why.end()) why.push_back(s);
    }
  return why;
}

ptx::Module build_sm80_gemm(const Sm80KernelSpec& spec) {
  const GemmConfig& cfg = spec.config;
  Kernel k(spec.kernel_name(), Target::sm_80);
  const int threads = spec.threads();
  const int warp_m = cfg.tile_m / cfg.warps_m, warp_n = cfg.tile_n / cfg.warps_n;
  const Type ab = spec.ab_dtype == DType::f16 ? f16 : bf16;
  const int d_bytes = element_bytes(spec.d_dtype);

  Reg pa = k.param_ptr("A"), pb = k.param_ptr("B"), pc = k.param_ptr("C"), pd = k.param_ptr("D");
  Reg M = k.param(u32, "M"), N = k.param(u32, "N"), K = k.param(u32, "K");
  Reg lda = k.param(u32, "lda"), ldb = k.param(u32, "ldb"), ldc = k.param(u32, "ldc"),
      ldd = k.param(u32, "ldd");
  Reg sa = k.param(u64, "batch_a"), sb = k.param(u64, "batch_b"), sc = k.param(u64, "batch_c"),
      sd = k.param(u64, "batch_d");
  Reg alpha = k.param(f32, "alpha"), beta = k.param(f32, "beta");
  k.reqntid(static_cast<std::uint32_t>(threads));
  Shared smem = k.dynamic_shared("smem", 128);

  // CTA order: consecutive CTAs walk down a group of 8 tile rows before moving
  // to the next tile column, so CTAs running together share A and B tiles in
  // L2 (a grouped, swizzled raster).
  constexpr int group = 8;
  Reg tiles_m = k.reg(u32), tiles_n = k.reg(u32);
  k.div(tiles_m, M + (cfg.tile_m - 1), cfg.tile_m);
  k.div(tiles_n, N + (cfg.tile_n - 1), cfg.tile_n);
  Reg pid = k.sreg(SReg::ctaid_x), batch = k.sreg(SReg::ctaid_y);
  Reg width = tiles_n * group;
  Reg group_id = k.reg(u32), in_group = k.reg(u32);
  k.div(group_id, pid, width);
  k.rem(in_group, pid, width);
  Reg first_m = group_id * group;
  Reg group_rows = k.reg(u32);
  k.sub(group_rows, tiles_m, first_m);
  k.min(group_rows, group_rows, group);
  Reg tile_row = k.reg(u32), tile_col = k.reg(u32);
  k.rem(tile_row, in_group, group_rows);
  k.div(tile_col, in_group, group_rows);
  Reg m0 = (first_m + tile_row) * cfg.tile_m;
  Reg n0 = tile_col * cfg.tile_n;

  auto batch_base = [&](const Reg& p, const Reg& stride, int bytes) {
    Reg b64 = k.reg(u64);
    k.cvt(u64, u32, b64, batch);
    Reg out = k.reg(u64);
    k.mul(b64, b64, stride);
    k.mad(out, b64, bytes, p);
    return out;
  };
  Reg a_base = batch_base(pa, sa, 2), b_base = batch_base(pb, sb, 2),
      d_base = batch_base(pd, sd, d_bytes);

  Reg tid = k.sreg(SReg::tid_x);
  const Staging sta = staging_a(spec), stb = staging_b(spec);
  OperandCopier copy_a = make_copier(k, sta, threads, cfg.tile_k, tid, a_base, lda, m0, M, K);
  OperandCopier copy_b = make_copier(k, stb, threads, cfg.tile_k, tid, b_base, ldb, n0, N, K);
  const int stage_bytes = sta.tile_bytes() + stb.tile_bytes();
  Reg smem_base = k.address_of(smem);
  auto issue_stage = [&](const Reg& stage) {
    Reg tile = smem_base + stage * stage_bytes;
    copy_a.issue(k, tile);
    copy_b.issue(k, tile + sta.tile_bytes());
    k.cp_async_commit();
  };

  // Warp placement in the CTA tile: warp w sits at (w % warps_m, w / warps_m).
  Reg warp = tid >> 5;
  Reg wm = warp & (cfg.warps_m - 1),
      wn = warp >> std::countr_zero(static_cast<unsigned>(cfg.warps_m));
  // Each warp's part of a staged tile starts on a whole number of swizzle
  // repeats (rows of K-contiguous panels, or a panel of its own), so the
  // swizzle, applied to offsets within the warp's part, is the same.
  Reg a_warp_bytes = wm * (warp_m * cfg.tile_k * 2), b_warp_bytes = wn * (warp_n * cfg.tile_k * 2);

  const auto atom = layout::mma_m16n8k16_f16();
  auto a_regs = tile::RegisterTile::allocate(k, atom.a, warp_m, cfg.tile_k, ab, "a");
  auto b_regs = tile::RegisterTile::allocate(k, atom.b, cfg.tile_k, warp_n, ab, "b");
  auto acc = tile::RegisterTile::allocate(k, atom.c, warp_m, warp_n, f32, "acc");
  for (const Reg& r : acc.regs()) k.mov(r, imm_f32(0.0f));

  Reg k_tiles = k.reg(u32);
  k.div(k_tiles, K + (cfg.tile_k - 1), cfg.tile_k);
  // Prologue: the first stages-1 k-tiles in flight (those past K zero-fill).
  for (int s = 0; s + 1 < cfg.stages; ++s) issue_stage(k.mov(u32, s));

  k.for_range(0, k_tiles, 1, [&](Reg kt) {
    // k-tile kt has landed once at most stages-2 newer groups are pending
    // (PTX ISA 9.7.9.27 cp.async.wait_group); the barrier makes every
    // thread's copies visible and frees the stage read in iteration kt-1.
    k.cp_async_wait(cfg.stages - 2);
    k.bar_sync();
    Reg write_stage = k.reg(u32), read_stage = k.reg(u32);
    k.rem(write_stage, kt + (cfg.stages - 1), cfg.stages);
    issue_stage(write_stage);
    k.rem(read_stage, kt, cfg.stages);
    Reg tile = smem_base + read_stage * stage_bytes;
    tile::warp::copy(k,
                     tile::SharedTile{tile + a_warp_bytes, sta.panel, spec.a_row_major,
                                      sm80_panel_swizzle(sta.panel)},
                     a_regs);
    tile::warp::copy(k,
                     tile::SharedTile{tile + sta.tile_bytes() + b_warp_bytes, stb.panel,
                                      spec.b_row_major, sm80_panel_swizzle(stb.panel)},
                     b_regs);
    tile::warp::gemm(k, acc, a_regs, b_regs, acc, 1.0f, 1.0f);
  });
  k.cp_async_wait_all();

  // Epilogue: D = alpha·acc (+ beta·C), each lane's elements at its fragment
  // coordinates, predicated on the matrix bounds.
  Reg lane = k.sreg(SReg::laneid);
  tile::LaneCoords lc = tile::emit_lane_coords(k, acc.steps(), lane);
  Reg row = m0 + (wm * warp_m) + lc.row, col = n0 + (wn * warp_n) + lc.col;
  Reg rows_left = k.reg(s32), cols_left = k.reg(s32);
  k.sub(rows_left, M, row);
  k.sub(cols_left, N, col);
  EpilogueMatrix d = make_epilogue_matrix(k, d_base, ldd, spec.d_row_major, d_bytes, row, col);
  std::optional<EpilogueMatrix> c;
  if (spec.has_c)
    c = make_epilogue_matrix(k, batch_base(pc, sc, d_bytes), ldc, spec.c_row_major, d_bytes, row,
                             col);

  const std::int64_t values = acc.steps().values();
  for (std::int64_t v = 0; v < values; v += 2) {
    // Values v and v+1 of the mma C fragment are adjacent columns of one row
    // (PTX ISA 9.7.14.5.14, "Matrix Fragments for mma.m16n8k16": c0,c1 at
    // col 2·t0 + {0,1}); both are handled element-wise where they are not.
    const std::pair<std::int64_t, std::int64_t> rc[2] = {acc.steps().value_offset(v),
                                                         acc.steps().value_offset(v + 1)};
    const bool adjacent = rc[1].first == rc[0].first && rc[1].second == rc[0].second + 1;
    // Addresses first: they are shared by the branches below.
    Reg d_at[2] = {d.address(k, rc[0].first, rc[0].second),
                   d.address(k, rc[1].first, rc[1].second)};
    Reg c_at[2];
    if (c)
      c_at[0] = c->address(k, rc[0].first, rc[0].second),
      c_at[1] = c->address(k, rc[1].first, rc[1].second);
    Regs x = {k.reg(f32), k.reg(f32)};
    Pred inside[2];
    for (int i = 0; i < 2; ++i) {
      k.mul(x[i], acc.regs()[v + i], alpha, {Round::rn});
      inside[i] = (rows_left > rc[i].first) && (cols_left > rc[i].second);
    }
    auto add_c = [&](const Regs& targets, const Reg& address) {
      Regs cv;
      for (std::size_t i = 0; i < targets.size(); ++i) cv.push_back(k.reg(f32));
      load_c(k, spec.d_dtype, address, cv);
      for (std::size_t i = 0; i < targets.size(); ++i) k.fma(targets[i], beta, cv[i], targets[i]);
    };
    auto singles = [&] {
      for (int i = 0; i < 2; ++i)
        k.guarded(inside[i], [&] {
          if (c) add_c({x[i]}, c_at[i]);
          store_d(k, spec.d_dtype, d_at[i], {x[i]});
        });
    };
    if (adjacent && spec.d_pairs) {
      // Both in bounds: one paired access each for C and D; else singles.
      k.if_else(
          inside[1],
          [&] {
            if (c && spec.c_pairs)
              add_c(x, c_at[0]);
            else if (c)
              add_c({x[0]}, c_at[0]), add_c({x[1]}, c_at[1]);
            store_d(k, spec.d_dtype, d_at[0], x);
          },
          singles);
    } else {
      singles();
    }
  }
  return k.module();
}

}  // namespace warpforge::ops
