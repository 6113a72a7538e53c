#include "sm80_gemm_amax_kernel.hpp"

#include <bit>

#include "kernel_io.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/layout/mma_atoms.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/tile/warp_copy.hpp"
#include "warpforge/tile/warp_gemm.hpp"

namespace warpforge::ops {
namespace {

using namespace dsl;
using runtime::DType;

constexpr int kBlockK = kSm80GemmAmaxBlockK;
// bf16 elements per shared row: 40 keeps every 8-element ldmatrix row on a
// 16-byte boundary (PTX ISA 9.7.14.5.15) and moves consecutive rows by 80
// bytes, so the eight rows of one ldmatrix phase fall in distinct banks.
constexpr int kSharedLd = kBlockK + 8;
constexpr int kWarpTile = 32;
constexpr int kScaleTableOffset = 256 * 4;  // bytes: the scale codes' half of the tables

// What one operand (A or B) contributes to a K step.
struct Operand {
  Reg data, scales;        // global addresses
  std::int64_t rows;       // M or N
  MatrixStrides strides;   // elements (nibbles for e2m1)
  std::int64_t row_tiles;  // RM of its scale layout
};

class Sm80GemmAmaxBuilder {
 public:
  Sm80GemmAmaxBuilder(const GemmAmaxProblem& p, GemmAmaxTile tile)
      : p_(p),
        tile_(tile),
        k_(kSm80GemmAmaxKernel, Target::sm_80),
        warps_m_(tile.m / kWarpTile),
        warps_(tile.m / kWarpTile * (tile.n / kWarpTile)) {}

  ptx::Module build() {
    Reg pa = k_.param_ptr("A"), pb = k_.param_ptr("B"), psfa = k_.param_ptr("SFA"),
        psfb = k_.param_ptr("SFB"), pc = k_.param_ptr("C"), pamax = k_.param_ptr("amax", 4),
        ptables = k_.param_ptr("tables", 4);
    const int threads = warps_ * 32;
    k_.reqntid(imm(threads));
    Shared a_tile = k_.shared("a_tile", tile_.m * kSharedLd * 2, 16);
    Shared b_tile = k_.shared("b_tile", tile_.n * kSharedLd * 2, 16);
    Shared tables = k_.shared("decode_tables", 512 * 4, 16);
    Shared cta_amax = k_.shared("cta_amax", 4, 4);

    tid_ = k_.sreg(SReg::tid_x);
    lane_ = tid_ & 31u;
    warp_ = tid_ >> 5;
    batch_ = k_.sreg(SReg::ctaid_z);
    Reg row0_m = k_.sreg(SReg::ctaid_x) * imm(tile_.m);
    Reg row0_n = k_.sreg(SReg::ctaid_y) * imm(tile_.n);
    tables_ = k_.address_of(tables);

    // The decode tables into shared memory (512 is a multiple of every block size here).
    for (int first = 0; first < 512; first += threads) {
      Reg index = tid_ + imm(first);
      Reg offset = k_.reg(u64);
      k_.mul_wide(offset, index, 4);
      Reg v = k_.reg(f32);
      k_.ld(Space::global, f32, v, at(ptables + offset));
      k_.st(Space::shared, f32, at(tables_ + (index << 2)), v);
    }
    Reg cta_amax_address = k_.address_of(cta_amax);
    Pred first_thread = tid_ == 0u;
    k_.guarded(first_thread, [&] { k_.st(Space::shared, u32, at(cta_amax_address), 0u); });
    k_.bar_sync();

    const auto atom = layout::mma_m16n8k16_f16();
    auto acc = tile::RegisterTile::allocate(k_, atom.c, kWarpTile, kWarpTile, f32, "acc");
    for (const Reg& r : acc.regs()) k_.mov(r, imm_f32(0.0f));
    auto fa = tile::RegisterTile::allocate(k_, atom.a, kWarpTile, kBlockK, bf16, "fa");
    auto fb = tile::RegisterTile::allocate(k_, atom.b, kBlockK, kWarpTile, bf16, "fb");
    Reg warp_m = warp_ & imm(warps_m_ - 1);
    Reg warp_n = warp_ >> imm(std::countr_zero(static_cast<unsigned>(warps_m_)));
    Reg a_base = k_.address_of(a_tile), b_base = k_.address_of(b_tile);
    Reg a_warp = a_base + (warp_m * imm(kWarpTile * kSharedLd * 2));
    Reg b_warp = b_base + (warp_n * imm(kWarpTile * kSharedLd * 2));

    const ScaleFactorLayout sfa{p_.m, p_.k, p_.l, p_.vec}, sfb{p_.n, p_.k, p_.l, p_.vec};
    const Operand a{pa, psfa, p_.m, p_.a, sfa.row_tiles()},
        b{pb, psfb, p_.n, p_.b, sfb.row_tiles()};
    k_.for_range(0u, imm(p_.k), imm(kBlockK), [&](Reg k0) {
      stage(a, row0_m, tile_.m, k0, a_base);
      stage(b, row0_n, tile_.n, k0, b_base);
      k_.bar_sync();
      tile::warp::copy(k_, tile::SharedTile{a_warp, kSharedLd, true}, fa);
      tile::warp::copy(k_, tile::SharedTile{b_warp, kSharedLd, false},
                       fb);  // B is stored n-rows of K
      tile::warp::gemm(k_, acc, fa, fb, acc, 1.0f, 1.0f);
      k_.bar_sync();  // the next step overwrites the tiles
    });

    Reg thread_max =
        epilogue(acc, pc, row0_m + (warp_m * imm(kWarpTile)), row0_n + (warp_n * imm(kWarpTile)));
    Reg warp_max = k_.reg(u32);
    k_.redux_sync(Redux::max, warp_max, thread_max);
    Pred leader = lane_ == 0u;
    k_.guarded(leader,
               [&] { k_.red(Space::shared, AtomOp::max, u32, at(cta_amax_address), warp_max); });
    k_.bar_sync();
    k_.guarded(first_thread, [&] {
      Reg cta_max = k_.reg(u32);
      k_.ld(Space::shared, u32, cta_max, at(cta_amax_address));
      k_.red(Space::global, AtomOp::max, u32, at(pamax), cta_max);
    });
    return k_.module();
  }

 private:
  Reg table(const Reg& code, int byte_offset) {
    Reg v = k_.reg(f32);
    k_.ld(Space::shared, f32, v, at(tables_ + (code << 2), byte_offset));
    return v;
  }

  // Rows [row0, row0 + tile_rows) of one operand, K [k0, k0 + 32), dequantized
  // to bf16 into `smem` (row r at r·kSharedLd). Warp w takes rows w, w + warps, ...
  void stage(const Operand& o, const Reg& row0, int tile_rows, const Reg& k0, const Reg& smem) {
    const bool fp4 = p_.ab_dtype == DType::e2m1;
    const std::int64_t k_tiles = (((p_.k + p_.vec - 1) / p_.vec) + 3) / 4;
    Reg column = k0 + lane_;
    Pred column_in = column < imm(p_.k);
    Reg kc = k_.reg(u32);
    k_.min(kc, column,
           imm(p_.k - 1));  // clamped, so every load is in bounds; the value is zeroed below
    Reg kb = kc >> imm(std::countr_zero(static_cast<unsigned>(p_.vec)));
    Reg k_part = kc * imm(o.strides.col) + batch_ * imm(o.strides.batch);
    Reg sf_part = batch_ * imm(o.row_tiles * k_tiles * 512) + ((kb >> 2u) * 512u) + (kb & 3u);
    for (int r = 0; r < tile_rows; r += warps_) {
      Reg local = warp_ + imm(r);
      Reg row = row0 + local;
      Pred in = (row < imm(o.rows)) && column_in;
      Reg rc = k_.reg(u32);
      k_.min(rc, row, imm(o.rows - 1));
      Reg element = (rc * imm(o.strides.row)) + k_part;
      Reg code = fp4 ? (load_global_byte(k_, o.data, element >> 1u) >> ((element & 1u) << 2)) & 15u
                     : load_global_byte(k_, o.data, element);
      // The 128x4 layout (scale_factor_layout.hpp): (r/128)·RK·512 + (r%32)·16 + ((r/32)%4)·4 + ...
      Reg sf_offset = sf_part + ((rc >> 7u) * imm(k_tiles * 512)) + ((rc & 31u) << 4) +
                      (((rc >> 5u) & 3u) << 2);
      Reg scale_code = load_global_byte(k_, o.scales, sf_offset);
      Reg v = k_.reg(f32);
      k_.mul(v, table(code, 0), table(scale_code, kScaleTableOffset), {Round::rn});
      k_.selp(v, v, imm_f32(0.0f), in);
      Reg h = k_.reg(b16);
      k_.cvt(bf16, f32, h, v, {Round::rn});
      k_.st(Space::shared, b16, at(smem + ((local * imm(kSharedLd) + lane_) << 1)), h);
    }
  }

  // Stores the warp's 32×32 of C and returns the thread's max |C| as u32 bits.
  Reg epilogue(const tile::RegisterTile& acc, const Reg& pc, const Reg& warp_row0,
               const Reg& warp_col0) {
    // PTX ISA 9.7.14.5, the mma.m16n8k16 C fragment: rows groupID (+8), columns 2·tig (+1).
    Reg group = lane_ >> 2, in_group = lane_ & 3u;
    Reg m_base = warp_row0 + group, n_base = warp_col0 + (in_group << 1);
    Reg thread_max = k_.mov(u32, 0u);
    const int atoms_m = kWarpTile / 16;
    for (int j = 0; j < kWarpTile / 8; ++j)
      for (int i = 0; i < atoms_m; ++i)
        for (int half = 0; half < 2;
             ++half) {  // slots 2·half, 2·half + 1: rows +8·half, adjacent columns
          Reg row = m_base + imm(i * 16 + 8 * half);
          Reg col = n_base + imm(j * 8);
          Pred row_in = row < imm(p_.m);
          const Reg& v0 = acc.regs()[(i + atoms_m * j) * 4 + 2 * half];
          const Reg& v1 = acc.regs()[(i + atoms_m * j) * 4 + 2 * half + 1];
          epilogue_column_pair(k_, p_, pc, batch_, row, row_in, col, v0, v1, thread_max);
        }
    return thread_max;
  }

  const GemmAmaxProblem& p_;
  GemmAmaxTile tile_;
  Kernel k_;
  int warps_m_, warps_;
  Reg tid_, lane_, warp_, batch_, tables_;
};

}  // namespace

ptx::Module build_sm80_gemm_amax(const GemmAmaxProblem& problem, GemmAmaxTile tile) {
  return Sm80GemmAmaxBuilder(problem, tile).build();
}

std::vector<float> sm80_gemm_amax_tables(const GemmAmaxProblem& problem) {
  std::vector<float> t(512, 0.0f);
  const int data_codes = problem.ab_dtype == DType::e2m1 ? 16 : 256;
  for (int c = 0; c < data_codes; ++c)
    t[static_cast<std::size_t>(c)] = decode(problem.ab_dtype, static_cast<std::uint8_t>(c));
  for (int c = 0; c < 256; ++c)
    t[256 + static_cast<std::size_t>(c)] = decode(problem.sf_dtype, static_cast<std::uint8_t>(c));
  return t;
}

}  // namespace warpforge::ops
