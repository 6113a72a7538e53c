// The bf16 pre-pass of the block-scaled op (dequantize_kernel.hpp).
#include "dequantize_kernel.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <vector>

#include "block_codes.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {

class DequantizeKernel {
 public:
  DequantizeKernel(const GemmAmaxProblem& p, BlockScaledOperand which, DequantizedOrder order,
                   DependentsStart dependents)
      : p_(p),
        order_(order),
        dependents_(dependents),
        k_(dequantize_kernel_name(which), Target::sm_90a),
        codes_(k_, p),
        rows_(which == BlockScaledOperand::a ? p.m : p.n),
        strides_(which == BlockScaledOperand::a ? p.a : p.b) {}

  ptx::Module build() {
    k_.maxntid(kDequantizeThreads);
    // The kernel after the pre-pass may start now (launched with
    // overlap_previous): it waits for this grid before reading its output.
    // Without the trigger it starts as this grid's CTAs exit.
    if (dependents_ == DependentsStart::at_start) {
      k_.griddepcontrol_launch_dependents();
      // Its CTAs share SMs with the dependent's: the swapped kernel at two
      // CTAs an SM holds 2 x 384 x 80 of the 65,536 registers, leaving 32 a
      // thread of one such CTA (more, and 32 of its CTAs would wait for it).
      k_.maxnreg(kDequantizeBesideRegisters);
    }
    Reg codes = k_.param_ptr("codes", 16), scales = k_.param_ptr("scales"), out = k_.param_ptr("out", 16);
    Reg batch = k_.sreg(SReg::ctaid_z);
    auto rows = [&](const std::function<void(const Reg&)>& body) {
      k_.for_range(k_.sreg(SReg::ctaid_y), imm(rows_), k_.sreg(SReg::nctaid_y), body);
    };
    if (order_ != DequantizedOrder::fragments) {
      Reg first = k_.sreg(SReg::ctaid_x) * imm(kDequantizeThreads * kDequantizePieces) + k_.sreg(SReg::tid_x);
      rows([&](const Reg& row) { convert_pieces(codes, scales, out, row, first, batch); });
      return k_.module();
    }
    const std::int64_t groups = dequantized_row(p_) / kDequantizeCodes;
    Reg group = k_.sreg(SReg::ctaid_x) * imm(kDequantizeThreads) + k_.sreg(SReg::tid_x);
    k_.if_then(group < imm(groups), [&] { rows([&](const Reg& row) { convert(codes, scales, out, row, group, batch); }); });
    return k_.module();
  }

 private:
  bool fp4() const { return p_.ab_dtype == DType::e2m1; }
  // Scale blocks a thread's 32 codes span: NVFP4's 16-code blocks two, else one.
  int scale_count() const { return kDequantizeCodes / p_.vec; }

  // The byte offset of row `row`'s codes in batch `batch` (u64).
  Reg row_bytes(const Reg& row, const Reg& batch) {
    Reg at_row = k_.reg(u64), tmp = k_.reg(u64);
    k_.mul_wide(at_row, batch, 1);
    k_.mul(at_row, at_row, static_cast<std::uint64_t>(code_bytes(p_.ab_dtype, strides_.batch)));
    k_.mul_wide(tmp, row, 1);
    k_.mad(at_row, tmp, static_cast<std::uint64_t>(code_bytes(p_.ab_dtype, strides_.row)), at_row);
    return at_row;
  }
  // The byte of scale block kb of row `row` in batch `batch` (u64; the
  // 128x4 layout, scale_factor_layout.hpp).
  Reg scale_byte(const Reg& row, const Reg& kb, const Reg& batch) {
    const ScaleFactorLayout layout{rows_, p_.k, p_.l, p_.vec};
    Reg offset = batch * imm(layout.batch_bytes()) + (row >> 7u) * imm(layout.k_tiles() * 512) + ((kb >> 2u) << 9) +
                 (row & 31u) * 16u + ((row >> 5u) & 3u) * 4u + (kb & 3u);
    Reg wide = k_.reg(u64);
    k_.cvt(wide, offset);
    return wide;
  }
  // Row `row` of batch `batch` in the (rows, K') output, in bytes (u64).
  Reg out_row(const Reg& row, const Reg& batch) {
    Reg dst = k_.reg(u64), tmp = k_.reg(u64);
    k_.mul_wide(dst, batch, imm(rows_));  // rows < 2^31 (the paths' refusals)
    k_.cvt(tmp, row);
    k_.add(dst, dst, tmp);
    k_.mul(dst, dst, static_cast<std::uint64_t>(dequantized_row(p_) * 2));
    return dst;
  }

  // K order: the thread's kDequantizePieces pieces of 8 codes, pieces
  // `first`, first + threads, ... of the row's ceil(K / 8): each warp-wide
  // instruction loads 32 consecutive pieces (256 bytes of FP8, 128 of E2M1)
  // and stores their 512 bytes of bf16, all loads issued before the first
  // conversion. A piece lies in one scale block (vec 16 or 32).
  void convert_pieces(const Reg& codes, const Reg& scales, const Reg& out, const Reg& row, const Reg& first,
                      const Reg& batch) {
    const std::int64_t pieces = (p_.k + 7) / 8;
    Reg src = codes + row_bytes(row, batch), dst = out + out_row(row, batch);
    struct Piece {
      Reg index;
      Pred in;
      Regs words;
      Reg scale;
    };
    std::vector<Piece> mine;
    for (int i = 0; i < kDequantizePieces; ++i) {
      Reg index = first + imm(i * kDequantizeThreads);
      Piece pc{index, index < imm(pieces), k_.regs(b32, fp4() ? 1 : 2), k_.mov(u32, 0u)};
      for (const Reg& w : pc.words) k_.mov(w, 0u);
      k_.if_then(pc.in, [&] {
        Reg offset = k_.reg(u64);
        k_.mul_wide(offset, index, fp4() ? 4 : 8);
        k_.ld(Space::global, b32, pc.words, at(src + offset), {.nc = true});
        Reg narrow = k_.reg(u16);
        k_.ld(Space::global, u8, narrow, at(scales + scale_byte(row, (index << 3u) >> imm(std::countr_zero(static_cast<unsigned>(p_.vec))), batch)), {.nc = true});
        k_.cvt(pc.scale, narrow);
      });
      mine.push_back(pc);
    }
    // bf16 pairs in K order, exactly: one multiply a pair where every scale
    // folds and (FP8) no code is NaN or inf, else BlockCodes' slow way.
    std::vector<Regs> pairs;
    for (std::size_t i = 0; i < mine.size(); ++i) pairs.push_back(k_.regs(b32, 4));
    auto run = [&](bool folded) {
      for (std::size_t i = 0; i < mine.size(); ++i) {
        Reg f = codes_.scale_factor(mine[i].scale, 0, 1, folded);
        if (!fp4()) {
          codes_.dequant_fp8(mine[i].words, f, pairs[i], folded);
          continue;
        }
        // dequant_fp4 pairs codes i and i + 4 (pair i): nibble_pairs order
        // as it is; K order is the low halves of pairs 0 and 1, of 2 and 3,
        // then their high halves (prmt, PTX ISA 9.7.9.7).
        if (order_ == DequantizedOrder::nibble_pairs) {
          codes_.dequant_fp4(mine[i].words, Regs{f}, pairs[i], folded);
          continue;
        }
        const Regs mixed = k_.regs(b32, 4);
        codes_.dequant_fp4(mine[i].words, Regs{f}, mixed, folded);
        for (std::size_t h = 0; h < 2; ++h) {
          k_.prmt(pairs[i][h], mixed[2 * h], mixed[2 * h + 1], 0x5410u);
          k_.prmt(pairs[i][h + 2], mixed[2 * h], mixed[2 * h + 1], 0x7632u);
        }
      }
    };
    std::vector<Reg> scale_regs;
    std::vector<Regs> words;
    for (const Piece& pc : mine) scale_regs.push_back(pc.scale), words.push_back(pc.words);
    Pred fast = fp4() ? codes_.scales_fold(scale_regs, 1)
                      : Pred(codes_.scales_fold(scale_regs, 1) && codes_.codes_finite(words));
    k_.if_else(fast, [&] { run(true); }, [&] { run(false); });
    for (std::size_t i = 0; i < mine.size(); ++i)
      k_.if_then(mine[i].in, [&] {
        Reg offset = k_.reg(u64);
        k_.mul_wide(offset, mine[i].index, 16);
        k_.st(Space::global, b32, at(dst + offset), pairs[i]);
      });
  }

  void convert(const Reg& codes, const Reg& scales, const Reg& out, const Reg& row, const Reg& group,
               const Reg& batch) {
    // The 32 codes: FP8 two 16-byte pieces (the second only where it starts
    // before K: a row's bytes end at its 16-byte padding), E2M1 one.
    Reg tmp = k_.reg(u64);
    k_.mul_wide(tmp, group, fp4() ? 16 : 32);
    Reg src = codes + row_bytes(row, batch) + tmp;
    Regs words = k_.regs(b32, fp4() ? 4 : 8, "codes");
    k_.ld(Space::global, b32, Regs(words.begin(), words.begin() + 4), at(src), {.nc = true});
    if (!fp4()) {
      for (int w = 4; w < 8; ++w) k_.mov(words[static_cast<std::size_t>(w)], 0u);
      k_.if_then(group * imm(kDequantizeCodes) + 16u < imm(p_.k), [&] {
        k_.ld(Space::global, b32, Regs(words.begin() + 4, words.end()), at(src, 16), {.nc = true});
      });
    }
    // The scale bytes: block 32·group / vec of this row and batch; NVFP4's
    // two are adjacent (the block is even).
    Reg narrow = k_.reg(u16), scale_bytes = k_.reg(u32);
    k_.ld(Space::global, scale_count() == 2 ? u16 : u8, narrow,
          at(scales + scale_byte(row, group * imm(scale_count()), batch)), {.nc = true});
    k_.cvt(scale_bytes, narrow);

    // bf16 pairs in BlockCodes' order, exactly: one multiply a pair where
    // the scales fold and (FP8) no code is NaN or inf, else the slow way.
    Regs pairs = k_.regs(b32, kDequantizeCodes / 2, "pairs");
    auto run = [&](bool folded) {
      Reg f0 = codes_.scale_factor(scale_bytes, 0, scale_count(), folded);
      Reg f1 = scale_count() == 2 ? codes_.scale_factor(scale_bytes, 1, 2, folded) : f0;
      if (fp4()) return codes_.dequant_fp4(words, Regs{f0, f1}, pairs, folded);
      for (int w = 0; w < 8; w += 4)
        codes_.dequant_fp8(Regs(words.begin() + w, words.begin() + w + 4), f0,
                           Regs(pairs.begin() + 2 * w, pairs.begin() + 2 * w + 8), folded);
    };
    std::vector<Reg> scale_regs{scale_bytes};
    Pred fast = fp4() ? codes_.scales_fold(scale_regs, scale_count())
                      : Pred(codes_.scales_fold(scale_regs, scale_count()) && codes_.codes_finite({words}));
    k_.if_else(fast, [&] { run(true); }, [&] { run(false); });

    Reg dst = out_row(row, batch);
    // Fragment order (dequantize_kernel.hpp): the thread's 32 codes are
    // those of t = 2u and 2u + 1 in their 64-code block (u = group % 2), so
    // pair q of each lands 2 positions apart: one 8-byte store per q.
    k_.mul_wide(tmp, (group >> 1) * 128u + ((group & 1u) << 3), 1);
    Reg to = out + dst + tmp;
    for (int q = 0; q < 8; ++q)
      k_.st(Space::global, b32, at(to, 2 * (16 * (q / 2) + 8 * (q % 2))),
            Regs{pairs[static_cast<std::size_t>(q)], pairs[static_cast<std::size_t>(8 + q)]});
  }

  const GemmAmaxProblem& p_;
  DequantizedOrder order_;
  DependentsStart dependents_;
  Kernel k_;
  BlockCodes codes_;
  std::int64_t rows_;
  MatrixStrides strides_;
};

}  // namespace

std::string dequantize_kernel_name(BlockScaledOperand which) {
  return which == BlockScaledOperand::a ? "gemm_amax_dequantize_a" : "gemm_amax_dequantize_b";
}

void launch_dequantize(runtime::Module& module, const GemmAmaxProblem& p, BlockScaledOperand which,
                       DequantizedOrder order, const runtime::TensorView& codes, const runtime::TensorView& scales,
                       runtime::DevicePtr out, runtime::Stream* stream) {
  // Threads along a row: one per 32 codes (fragment order), or per
  // kDequantizePieces pieces of 8 codes (K order).
  const std::int64_t per_row = order != DequantizedOrder::fragments
                                   ? ((p.k + 7) / 8 + kDequantizePieces - 1) / kDequantizePieces
                                   : dequantized_row(p) / kDequantizeCodes;
  const std::int64_t rows = which == BlockScaledOperand::a ? p.m : p.n;
  const runtime::LaunchConfig config{
      .grid = {static_cast<std::uint32_t>((per_row + kDequantizeThreads - 1) / kDequantizeThreads),
               static_cast<std::uint32_t>(std::min<std::int64_t>(rows, 65535)), static_cast<std::uint32_t>(p.l)},
      .block = {kDequantizeThreads}};
  const runtime::TensorView copy(codes.device(), out, DType::u8, {dequantized_bytes(p, which)});
  module.launch(dequantize_kernel_name(which), config, {codes, scales, copy}, stream);
}

ptx::Module build_dequantize_kernel(const GemmAmaxProblem& problem, BlockScaledOperand which,
                                   DequantizedOrder order, DependentsStart dependents) {
  return DequantizeKernel(problem, which, order, dependents).build();
}

}  // namespace warpforge::ops
