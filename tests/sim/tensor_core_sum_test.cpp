// The H100's tensor-core sum (src/sim/tensor_core_sum.hpp) on recorded
// cases: a subnormal factor takes its format's smallest normal exponent when
// the step's alignment is chosen; f16 accumulators align their terms as the
// f32 ones do before the sum is rounded to f16.
#include <array>

#include "../../src/sim/float_format.hpp"
#include "../../src/sim/tensor_core_sum.hpp"
#include "sim_harness.hpp"

namespace warpforge::sim::testing {
namespace {

// wgmma m64n128k32.f16.e4m3.e5m2, case 682 (tests/gpu_truth/wgmma.truth:
// D row 10, column 84): A's row (e4m3), B's column (e5m2) and C (f16). A[0]
// is the subnormal e4m3 -0.01171875 = -0.75·2^-6 and B[0] = -40960 = 1.25·2^15:
// by its encoding the product's exponent is -6 + 15 = 9, above C's 8 (by
// floor(log2), -7 + 15 = 8), so the terms keep 13 bits below 2^9, not 2^8.
constexpr std::array<double, 32> kRow = {
    -0.01171875, 1.0,          -1.5,      1.75,  0.234375,     -0.5,    0.375,    0.34375,
    8.0,         15.0,         -0.171875, 5.5,   1.125,        0.0,     -0.46875, -0.3125,
    2.0,         3.0,          0.125,     11.0,  -0.009765625, -0.5625, 14.0,     1.375,
    5.5,         -0.013671875, 12.0,      -1.25, -13.0,        -5.5,    -5.5,     0.25};
constexpr std::array<double, 32> kColumn = {
    -40960.0, -0.15625, 5.0,  -0.625, -0.375, -0.75, -0.4375,  -0.1875, -14.0,    0.4375, 2.5,
    0.5,      2.0,      1.25, 0.125,  3.5,    4.0,   -0.21875, 2.0,     7.0,      -1.5,   -0.125,
    -10.0,    -0.3125,  14.0, -8.0,   1.5,    -8.0,  -0.875,   12.0,    -0.15625, -14.0};
constexpr double kC = -479.25;

double sum_with(int a_min_exponent, int b_min_exponent) {
  std::array<int, 32> a_exp{}, b_exp{};
  const Factors a{kRow.data(), a_exp.data(),
                  exponents(kRow.data(), 32, a_min_exponent, a_exp.data())};
  const Factors b{kColumn.data(), b_exp.data(),
                  exponents(kColumn.data(), 32, b_min_exponent, b_exp.data())};
  return tensor_core_sum(kC, a, b, 32, kHopperFp8HalfSum);
}

TEST(TensorCoreSum, SubnormalFactorsAlignByTheirEncodedExponent) {
  EXPECT_EQ(element_min_exponent(ptx::Type::e4m3), -6);
  EXPECT_EQ(element_min_exponent(ptx::Type::e5m2), -14);
  EXPECT_EQ(element_min_exponent(ptx::Type::f16), -14);
  EXPECT_EQ(element_min_exponent(ptx::Type::bf16), -126);
  // The H100's result, 0xD75A (exact in f16, so the final rounding keeps it).
  EXPECT_EQ(sum_with(element_min_exponent(ptx::Type::e4m3), element_min_exponent(ptx::Type::e5m2)),
            -117.625);
  // Control: with floor(log2|x|) for the subnormal, the terms keep one bit
  // more and the sum is the one the simulator gave before the rule.
  EXPECT_EQ(sum_with(-1000, -1000), -117.8125);
}

// mma.sync m16n8k8.f16.f16.f16.f16, case 4068 of the out-of-sample recording
// (seed 20261126, tests/gpu_truth/seed20261126/mma_sync.truth: warp 31, D
// row 6, column 2): A's row, B's column and C, all f16. The exact sum,
// 117.78125 + 6.4e-7, is just above the midpoint 117.78125 between the f16
// values 117.75 (0x575C) and 117.8125 (0x575D); the H100 gives 0x575C: the
// products' bits below 2^(6 - 25) (the largest product, -10.171875 ·
// -10.5078125, has exponent 3 + 3) are cut, which leaves the midpoint, and
// nearest even rounds it down.
TEST(TensorCoreSum, HalfAccumulatorsAlignTermsBeforeRoundingToF16) {
  constexpr std::array<double, 8> kHalfRow = {
      7.23046875,  0.0,          -10.171875,     -6.57421875,
      -1.42578125, 0.9560546875, 0.464111328125, 0x248 * 0x1p-24};  // the last subnormal
  constexpr std::array<double, 8> kHalfColumn = {0.81005859375, 0.79833984375, -2.755859375,
                                                 -10.5078125,   3.28515625,    15.71875,
                                                 9.7734375,     6.59375};
  constexpr double kHalfC = -0.06903076171875;
  std::array<int, 8> a_exp{}, b_exp{};
  const int f16_min = element_min_exponent(ptx::Type::f16);
  const Factors a{kHalfRow.data(), a_exp.data(),
                  exponents(kHalfRow.data(), 8, f16_min, a_exp.data())};
  const Factors b{kHalfColumn.data(), b_exp.data(),
                  exponents(kHalfColumn.data(), 8, f16_min, b_exp.data())};
  const TensorCoreSum k8{8, kHopperHalfToHalfSum.aligned_bits, kHopperHalfToHalfSum.result_bits};
  const double sum = tensor_core_sum(kHalfC, a, b, 8, k8);
  EXPECT_EQ(sum, 117.78125);
  EXPECT_EQ(encode_float(sum, kF16, Rounding::rn, false), 0x575Cu);  // the H100's bits
  // Control: the exact sum, rounded once, gives the simulator's bits before
  // the rule.
  double exact = kHalfC;
  for (std::size_t k = 0; k < 8; ++k) exact += kHalfRow[k] * kHalfColumn[k];
  EXPECT_GT(exact, 117.78125);
  EXPECT_EQ(encode_float(exact, kF16, Rounding::rn, false), 0x575Du);
}

}  // namespace
}  // namespace warpforge::sim::testing
