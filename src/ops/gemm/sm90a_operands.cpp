#include "sm90a_operands.hpp"

namespace warpforge::ops {

using namespace dsl;

namespace {

constexpr std::uint32_t kRow = kSm90aRow;
constexpr std::uint32_t kAtom = 8 * kSm90aRow;  // 8 rows: the swizzle pattern's repeat
// An MN-major box of `cols` 16-bit elements by 64 K rows, and its 8-K-row atom.
std::uint32_t mn_box_bytes(int cols) { return static_cast<std::uint32_t>(cols) * 2 * 64; }
std::uint32_t mn_atom_bytes(int cols) { return static_cast<std::uint32_t>(cols) * 2 * 8; }

}  // namespace

Sm90aParams sm90a_params(Kernel& k, const Sm90aSpec& s) {
  Sm90aParams p;
  p.map_a = k.param_bytes("map_a", 128, 64);
  p.map_b = k.param_bytes("map_b", 128, 64);
  p.map_d = k.param_bytes("map_d", 128, 64);
  Sm90aOutput& o = p.out;
  if (s.has_c) {
    o.c = k.param_ptr("C", runtime::bits(s.d) / 8);
    o.c_rs = k.param(u64, "c_row_stride");
    o.c_cs = k.param(u64, "c_col_stride");
    o.c_bs = k.param(u64, "c_batch_stride");
  }
  if (sm90a_tail_cols(s)) {
    o.d = k.param_ptr("D", runtime::bits(s.d) / 8);
    o.d_rs = k.param(u64, "d_row_stride");
    o.d_bs = k.param(u64, "d_batch_stride");
  }
  o.m = k.param(u32, "M");
  o.n = k.param(u32, "N");
  p.k = k.param(u32, "K");
  p.l = k.param(u32, "L");
  o.alpha = k.param(f32, "alpha");
  if (s.has_c) o.beta = k.param(f32, "beta");
  if (s.amax) p.amax = k.param(u64, "amax");
  return p;
}

void sm90a_load_share(Kernel& k, const Sm90aOperandTile& t, const Reg& map, const Reg& dst, const Reg& row0,
                      const Reg& part, int parts, const Reg& kx, const Reg& batch, const Reg& full,
                      const std::optional<Src>& mask) {
  if (t.k_major) {
    Reg first = part * (t.rows / parts);
    k.tma_load(at(dst + first * kRow), map, {kx, row0 + first, batch}, at(full), mask);
    return;
  }
  const int boxes = t.rows / t.box_cols / parts;
  for (int i = 0; i < boxes; ++i) {
    Reg box = part * boxes + i;
    k.tma_load(at(dst + box * mn_box_bytes(t.box_cols)), map, {row0 + box * t.box_cols, kx, batch}, at(full), mask);
  }
}

Reg sm90a_a_descriptor(Kernel& k, const Sm90aSpec& s, const Sm90aSmem& smem, const Reg& base, const Reg& rows) {
  Reg a_smem = base + smem.a + (s.a_k_major ? rows * kRow : (rows >> 6) * mn_box_bytes(64));
  return tile::warpgroup::smem_descriptor(k, a_smem, s.a_k_major ? 16 : mn_box_bytes(64), kAtom);
}

Reg sm90a_b_descriptor(Kernel& k, const Sm90aSpec& s, const Sm90aSmem& smem, const Reg& base) {
  Reg b_smem = base + smem.b;
  return s.b_k_major ? tile::warpgroup::smem_descriptor(k, b_smem, 16, kAtom)
                     : tile::warpgroup::smem_descriptor(k, b_smem, mn_box_bytes(s.b_box_cols()),
                                                        mn_atom_bytes(s.b_box_cols()), s.b_swizzle());
}

tile::warpgroup::KBlock sm90a_k_block(const Sm90aSpec& s) {
  return {.ab = sm90a_dsl_type(s.ab),
          .a_major = s.a_k_major ? WgmmaMajor::k : WgmmaMajor::mn,
          .b_major = s.b_k_major ? WgmmaMajor::k : WgmmaMajor::mn,
          .k_steps = kSm90aTileK / 16,
          .a_step = s.a_k_major ? 32 : 2 * kAtom,
          .b_step = s.b_k_major ? 32 : 2 * mn_atom_bytes(s.b_box_cols())};
}

}  // namespace warpforge::ops
