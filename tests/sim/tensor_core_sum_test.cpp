// The H100's tensor-core sum (src/sim/tensor_core_sum.hpp) on a recorded
// case: a subnormal factor takes its format's smallest normal exponent when
// the step's alignment is chosen.
#include <array>

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

}  // namespace
}  // namespace warpforge::sim::testing
