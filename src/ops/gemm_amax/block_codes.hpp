// Block-scaled data to bf16 inside a kernel: FP8 (e4m3, e5m2) and E2M1 codes
// times their e8m0 or e4m3 scales, exactly. Every such product has at most
// 6 significant bits, so it is a bf16 (REFERENCE.md: "FP8 x e8m0 and E2M1 x
// E4M3 products are exact in bf16"), short of bf16's range. The codes move
// into bf16's fields by integer bit moves (the value times 2^-u, u =
// unbias_exponent()) and one exact bf16x2 multiply by the scale times 2^u
// restores it where that factor is a normal bf16 (scales_fold, and for FP8
// no NaN or inf code: codes_finite); elsewhere an exact two-step way
// (decode_scale, apply_scale, cvt for FP8 specials). Shared by the GemmAmax
// kernels that convert codes in registers.
#pragma once

#include <vector>

#include "gemm_amax_problem.hpp"
#include "warpforge/dsl.hpp"

namespace warpforge::ops {

class BlockCodes {
 public:
  BlockCodes(dsl::Kernel& k, const GemmAmaxProblem& p) : k_(k), p_(p) {}

  // The power of two a code's bit move into bf16's fields leaves out: 2^126
  // for E2M1 (bias 1), 2^120 for e4m3 (bias 7), 2^112 for e5m2 (bias 15).
  int unbias_exponent() const {
    return p_.ab_dtype == runtime::DType::e2m1 ? 126 : p_.ab_dtype == runtime::DType::e4m3 ? 120 : 112;
  }
  // Whether every scale in `bytes` (`count` per register: 1, or 2 adjacent
  // bytes) folds with 2^u into one normal bf16 factor.
  dsl::Pred scales_fold(const std::vector<dsl::Reg>& bytes, int count);
  // Whether no FP8 code in `words` is NaN or inf.
  dsl::Pred codes_finite(const std::vector<dsl::Regs>& words);
  // The bf16x2 factor (the value in both halves) of scale g of the `count`
  // in `bytes`: the scale times 2^u where `folded`, else the scale.
  dsl::Reg scale_factor(const dsl::Reg& bytes, int g, int count, bool folded);
  // E2M1 words (8 codes each, 4 words or 2) to bf16 pairs: codes 8j + i and
  // 8j + i + 4 are the low and high halves of out[4j + i]; the first half of
  // the words takes factor2[0], the second factor2[1].
  void dequant_fp4(const dsl::Regs& w, const dsl::Regs& factor2, const dsl::Regs& out, bool folded);
  // FP8 words (4 codes each) to bf16 pairs: codes 2p and 2p + 1 are the low
  // and high halves of out[p], all times factor2.
  void dequant_fp8(const dsl::Regs& w, const dsl::Reg& factor2, const dsl::Regs& out, bool folded);
  // d = y x 2^u x the scale, exactly, for y a code's bits moved into bf16's
  // fields (bf16x2): one multiply by factor2 where `folded`, else two.
  void apply_scale(const dsl::Reg& d, const dsl::Reg& y, const dsl::Reg& factor2, bool folded);

 private:
  dsl::Reg decode_scale(const dsl::Reg& e, int byte, int bytes);

  dsl::Kernel& k_;
  const GemmAmaxProblem& p_;
};

}  // namespace warpforge::ops
