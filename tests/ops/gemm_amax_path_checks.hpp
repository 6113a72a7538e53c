// Checks that every path of the GemmAmax family must pass in the same way,
// for the path-specific test files (gemm_amax_prepass_sim_test.cpp,
// gemm_amax_swapped_sim_test.cpp): the NaN rules of amax, NaN in the scale
// layout's padding, and a caller's workspace.
#pragma once

#include <cstdint>
#include <functional>

#include "gemm_amax_test_support.hpp"

namespace warpforge::ops::testing {

// A case of the path under test, and its setup (which asserts the path runs it).
using PathCase = std::function<GemmAmaxCase(ScaledFormat, runtime::DType c, std::int64_t m, std::int64_t n,
                                            std::int64_t k, std::int64_t l)>;
using PathSetup = std::function<GemmAmaxSetup(const GemmAmaxCase&, std::uint32_t seed)>;

// Runs the setup and expects C and amax to match the reference.
void expect_pass(GemmAmaxSetup& s, float initial_amax = 0.0f);

// amax folds into the caller's value; NaN in A's data makes its row of C and
// amax NaN; an e5m2 infinity makes its row of C inf (and the accumulator's
// inf x 0 past N must not turn amax into NaN). Shapes M ≤ 40, K = 64.
void check_amax_rules(const PathCase& make_case, const PathSetup& make, std::uint32_t seed);

// NaN in the scale layout's padding (rows past M or N, blocks past K)
// reaches neither C nor amax, for MXFP8, MXFP4 and NVFP4 at m x n x k.
void check_nan_scale_padding(const PathCase& make_case, const PathSetup& make, std::int64_t m, std::int64_t n,
                             std::int64_t k, std::uint32_t seed);

// With caller_workspace the op allocates nothing: execute() without a
// workspace is refused naming its size (at least `at_least` bytes); with
// one, filled with `fill` first, it runs twice to the same bits.
void check_callers_workspace(const GemmAmaxCase& c, const PathSetup& make, std::uint32_t seed, std::uint8_t fill,
                             std::size_t at_least);

}  // namespace warpforge::ops::testing
