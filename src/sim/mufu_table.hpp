// The multifunction unit's recorded tables (issue 45). For a function over
// its reduced domain of N inputs (a mantissa, a fixed-point fraction:
// mufu_f32.cpp), the H100/H200's f32 result y, in units u of its binade's
// last place (2^-24 below 1, 2^-23 from 1 to 2), is
//   y/u = floor(F/u + e(t) + 1/2) + residual[i]
// for input i: F the exact function (in double), e = (c0 + c1·t) + c2·(t·t)
// with the coefficients of i's interval (N split into 2^b equal intervals)
// and t = (i mod per)/per·2 − 1 its position in it, per = N/2^b. The
// coefficients fit the unit's error (a least-squares quadratic per
// interval); the residual, nonzero for 0.4–1.8% of the inputs, is the
// recorded GPU truth the smooth part misses. Made from the recording
// (tools/difftest/mufu_sweep.hpp) by tools/difftest/mufu_tables.py, which
// computes the prediction with the same double operations in the same
// order; embedded in the library from src/sim/mufu/.
//
// The encoding: a 16-byte header, "WFMC", a version byte (2), the Rice
// parameter k, b, a zero byte, then little-endian u32s: N, the nonzero
// residuals; then 3·2^b little-endian doubles (c0, c1, c2 per interval);
// then a bit stream, most significant bit of each byte first, of one code
// per nonzero residual: the count of zero residuals since the previous
// nonzero one (or the start) in Rice code (q = count >> k ones, a zero,
// then the k low bits), the sign (1: negative), then |value| − 1 in unary
// (ones, then a zero).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace warpforge::sim {

struct MufuTable {
  int interval_bits = 0;
  std::vector<std::array<double, 3>> coefficients;
  std::vector<std::int8_t> residual;

  // The result for input i, whose exact function value is F, in (0.5, 2).
  float result(std::uint32_t i, double F) const;
};

// A table of `entries` inputs; throws SimError on a malformed one or one of
// another size.
MufuTable decode_mufu_table(std::span<const std::uint8_t> encoded, std::uint32_t entries);

}  // namespace warpforge::sim
