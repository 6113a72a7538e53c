// The differential harness's inputs: a seeded generator of bit patterns that
// mixes the edges of each number format (signed zeros, subnormals, the
// smallest and largest normals, infinities, NaNs with payloads) with random
// bits and with moderate values, where rounding and cancellation happen.
// Everything is computed from the raw output of std::mt19937_64, whose
// sequence the C++ standard fixes, so the same seed gives the same inputs on
// every machine: a recording stores only its seeds and its outputs.
#pragma once

#include <cstdint>
#include <random>

namespace warpforge::difftest {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  std::uint64_t bits() { return engine_(); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(engine_() >> 32); }
  // Uniform enough in [0, n) for inputs (n is small).
  std::uint64_t below(std::uint64_t n) { return engine_() % n; }
  bool percent(int p) { return below(100) < static_cast<std::uint64_t>(p); }

 private:
  std::mt19937_64 engine_;
};

// A binary floating-point format, by its field widths (PTX ISA 5.2.5: f16,
// bf16, tf32 and the f32/f64 IEEE formats; e4m3 and e5m2 of the OCP FP8
// specification, e4m3 having no infinity and S.1111.111 as its NaN).
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  bool has_infinity;
  int width() const { return 1 + exponent_bits + mantissa_bits; }
  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  std::uint64_t sign_bit() const { return 1ull << (width() - 1); }
  std::uint64_t exponent_mask() const { return ((1ull << exponent_bits) - 1) << mantissa_bits; }
  std::uint64_t mantissa_mask() const { return (1ull << mantissa_bits) - 1; }
  std::uint64_t largest_finite() const;  // bits of the largest finite positive value
};

inline constexpr FloatFormat kF64{11, 52, true}, kF32{8, 23, true}, kF16{5, 10, true},
    kBF16{8, 7, true}, kE4M3{4, 3, false}, kE5M2{5, 2, true};

// One value of `f`: about a quarter edges, a fifth uniformly random bits,
// the rest moderate values (exponents within 2^±6 of one, random mantissa
// and sign).
std::uint64_t float_value(Rng& rng, const FloatFormat& f);
// An edge of `f` with a random sign: 0, the smallest and largest subnormal, a
// random subnormal, the smallest normal, 1, the largest finite value,
// infinity, the canonical NaN, or a NaN with a random payload.
std::uint64_t float_edge(Rng& rng, const FloatFormat& f);
// A value of `f` whose bits below `kept` mantissa bits are a tie (10...0) or
// one unit either side of it: the hard cases of rounding to a format with
// `kept` mantissa bits.
std::uint64_t float_tie(Rng& rng, const FloatFormat& f, int kept);
// A moderate value of `f` with exponent in [-spread, spread].
std::uint64_t float_moderate(Rng& rng, const FloatFormat& f, int spread);

// An integer of `width` bits: edges (0, 1, -1, the signed and unsigned
// extremes and their neighbours, powers of two), small values, random bits.
std::uint64_t int_value(Rng& rng, int width);

// The bits of a double as the format's nearest value toward zero (inputs
// only; the harness never rounds what it compares).
std::uint64_t float_bits_toward_zero(double v, const FloatFormat& f);

}  // namespace warpforge::difftest
