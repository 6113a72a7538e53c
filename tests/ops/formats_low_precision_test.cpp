// ops/low_precision.hpp: every code of every format, RNE ties, saturation,
// NaN, and the fp8 conversions against the simulator's cvt (sim/float_format.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "../../src/sim/float_format.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/low_precision.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

int code_count(DType t) {
  return t == DType::e2m1 ? 16 : 256;
}

TEST(LowPrecision, DecodeThenEncodeIsIdentityOnEveryFiniteCode) {
  for (DType t : {DType::e4m3, DType::e5m2, DType::e2m1, DType::e8m0}) {
    int finite = 0;
    for (int c = 0; c < code_count(t); ++c) {
      const float v = decode(t, static_cast<std::uint8_t>(c));
      if (!std::isfinite(v)) continue;
      ++finite;
      EXPECT_EQ(encode(t, v), c) << runtime::name(t) << " code " << c << " value " << v;
    }
    // e4m3: 256 less two NaNs; e5m2: 256 less 2 inf and 6 NaN; e2m1: 16; e8m0: 255.
    const int expected = t == DType::e4m3   ? 254
                         : t == DType::e5m2 ? 248
                         : t == DType::e2m1 ? 16
                                            : 255;
    EXPECT_EQ(finite, expected) << runtime::name(t);
  }
}

TEST(LowPrecision, DecodesTheDocumentedValues) {
  EXPECT_EQ(decode(DType::e4m3, 0x7E), 448.0f);
  EXPECT_EQ(decode(DType::e4m3, 0x08), std::ldexp(1.0f, -6));  // smallest normal
  EXPECT_EQ(decode(DType::e4m3, 0x01), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(decode(DType::e4m3, 0xB8), -1.0f);
  EXPECT_TRUE(std::isnan(decode(DType::e4m3, 0x7F)));
  EXPECT_TRUE(std::isnan(decode(DType::e4m3, 0xFF)));
  EXPECT_EQ(decode(DType::e4m3, 0x78), 256.0f);  // S.1111.000 is a number in the fn variant
  EXPECT_EQ(decode(DType::e5m2, 0x7B), 57344.0f);
  EXPECT_EQ(decode(DType::e5m2, 0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(decode(DType::e5m2, 0xFC), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(decode(DType::e5m2, 0x7D)));
  EXPECT_EQ(decode(DType::e5m2, 0x01), std::ldexp(1.0f, -16));
  const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(decode(DType::e2m1, static_cast<std::uint8_t>(c)), e2m1[c]);
    EXPECT_EQ(decode(DType::e2m1, static_cast<std::uint8_t>(c | 8)), -e2m1[c]);
  }
  EXPECT_EQ(decode(DType::e8m0, 127), 1.0f);
  EXPECT_EQ(decode(DType::e8m0, 128), 2.0f);
  EXPECT_EQ(decode(DType::e8m0, 0), std::ldexp(1.0f, -127));
  EXPECT_EQ(decode(DType::e8m0, 254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(decode(DType::e8m0, 0xFF)));
  EXPECT_EQ(max_finite(DType::e4m3), 448.0f);
  EXPECT_EQ(max_finite(DType::e5m2), 57344.0f);
  EXPECT_EQ(max_finite(DType::e2m1), 6.0f);
}

// Between two neighbours the midpoint goes to the even code, and a hair off
// the midpoint to the nearer one.
TEST(LowPrecision, RoundsToNearestTiesToEven) {
  for (DType t : {DType::e4m3, DType::e5m2, DType::e2m1}) {
    const int sign_bit = t == DType::e2m1 ? 8 : 0x80;
    int ties = 0;
    for (int c = 0; c + 1 < sign_bit; ++c) {
      const float lo = decode(t, static_cast<std::uint8_t>(c)),
                  hi = decode(t, static_cast<std::uint8_t>(c + 1));
      if (!std::isfinite(hi)) break;
      const float mid = (lo + hi) / 2;  // exact: both have few significant bits
      const int even = c % 2 == 0 ? c : c + 1;
      EXPECT_EQ(encode(t, mid), even) << runtime::name(t) << " between " << lo << " and " << hi;
      EXPECT_EQ(encode(t, -mid), even | sign_bit)
          << runtime::name(t) << " between " << -lo << " and " << -hi;
      EXPECT_EQ(encode(t, std::nextafter(mid, lo)), c) << runtime::name(t);
      EXPECT_EQ(encode(t, std::nextafter(mid, hi)), c + 1) << runtime::name(t);
      ++ties;
    }
    EXPECT_GT(ties, 6);
  }
}

TEST(LowPrecision, SaturatesWhereTheCvtIsSatfinite) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(encode(DType::e4m3, 449.0f), 0x7E);
  EXPECT_EQ(encode(DType::e4m3, 1e9f), 0x7E);
  EXPECT_EQ(encode(DType::e4m3, -inf), 0xFE);
  EXPECT_EQ(encode(DType::e5m2, 61440.0f), 0x7B);  // would round to inf without saturation
  EXPECT_EQ(encode(DType::e5m2, inf), 0x7B);
  EXPECT_EQ(encode(DType::e5m2, -inf), 0xFB);
  EXPECT_EQ(encode(DType::e2m1, 7.0f), 0x7);
  EXPECT_EQ(encode(DType::e2m1, -100.0f), 0xF);
  EXPECT_EQ(encode(DType::e2m1, 0.2f), 0x0);
  EXPECT_EQ(encode(DType::e2m1, -0.3f), 0x9);  // -0.5
  EXPECT_EQ(encode(DType::e4m3, -0.0f), 0x80);
}

TEST(LowPrecision, NaNEncodesToTheCanonicalNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(encode(DType::e4m3, nan), 0x7F);
  EXPECT_EQ(encode(DType::e5m2, nan), 0x7F);
  EXPECT_EQ(encode(DType::e8m0, nan), 0xFF);
  EXPECT_EQ(encode(DType::e2m1, nan), 0x7);  // no NaN in e2m1: +6, documented
  EXPECT_TRUE(std::isnan(round_to(DType::e4m3, nan)));
}

TEST(LowPrecision, E8m0EncodeRoundsUpToAPowerOfTwo) {
  EXPECT_EQ(encode(DType::e8m0, 1.0f), 127);
  EXPECT_EQ(encode(DType::e8m0, 1.5f), 128);
  EXPECT_EQ(encode(DType::e8m0, 0.75f), 127);
  EXPECT_EQ(encode(DType::e8m0, -4.0f), 129);
  EXPECT_EQ(encode(DType::e8m0, 0.0f), 0);
  EXPECT_EQ(encode(DType::e8m0, std::ldexp(1.0f, 127) * 1.5f), 0xFF);
  EXPECT_EQ(encode(DType::e8m0, std::numeric_limits<float>::infinity()), 0xFF);
}

// The simulator's cvt.rn.satfinite.{e4m3,e5m2} (written independently from
// the PTX ISA) must agree with ops::encode on every midpoint, its neighbours,
// and random floats over the whole range.
TEST(LowPrecision, Fp8EncodeMatchesTheSimulatorsCvt) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-24.0f, 20.0f);
  for (DType t : {DType::e4m3, DType::e5m2}) {
    const sim::FloatFormat& f = t == DType::e4m3 ? sim::kE4M3 : sim::kE5M2;
    std::vector<float> probes{0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN()};
    for (int c = 0; c < 255; ++c) {
      const float lo = decode(t, static_cast<std::uint8_t>(c)),
                  hi = decode(t, static_cast<std::uint8_t>(c + 1));
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      const float mid = (lo + hi) / 2;
      probes.insert(probes.end(),
                    {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f), -mid});
    }
    for (int i = 0; i < 20000; ++i) {
      const float v = std::exp2(exponent(rng)) * (rng() % 2 ? 1.0f : -1.0f);
      probes.push_back(v);
    }
    for (float v : probes) {
      const std::uint32_t sim_code = sim::encode_float(v, f, sim::Rounding::rn, true);
      const std::uint8_t ours = encode(t, v);
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(decode(t, static_cast<std::uint8_t>(sim_code))) &&
                    std::isnan(decode(t, ours)));
        continue;
      }
      EXPECT_EQ(ours, sim_code) << runtime::name(t) << " of " << v;
      EXPECT_EQ(decode(t, ours), static_cast<float>(sim::decode_float(sim_code, f))) << runtime::name(t);
    }
  }
}

TEST(LowPrecision, PacksE2m1LowNibbleFirst) {
  const std::uint8_t codes[5] = {0x1, 0x2, 0xF, 0x7, 0x9};
  const auto bytes = pack_e2m1(codes);
  ASSERT_EQ(bytes.size(), 3u);
  EXPECT_EQ(bytes[0], 0x21);
  EXPECT_EQ(bytes[1], 0x7F);
  EXPECT_EQ(bytes[2], 0x09);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(e2m1_at(bytes, i), codes[i]);
}

TEST(LowPrecision, RefusalsNameTheValueAndWhatIsAccepted) {
  try {
    decode(DType::f16, 1);
    FAIL() << "decode of f16 was accepted";
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(), "decode of dtype f16 refused: accepted e4m3, e5m2, e2m1 and e8m0");
  }
  try {
    decode(DType::e2m1, 16);
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(), "decode of e2m1 code 16 refused: e2m1 codes are nibbles 0..15");
  }
  const std::uint8_t bad[2] = {1, 16};
  try {
    pack_e2m1(bad);
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(), "pack_e2m1: code 16 at index 1 refused: e2m1 codes are nibbles 0..15");
  }
  try {
    round_to(DType::i32, 1.0f);
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(), "round_to dtype i32 refused: accepted f32, f16, bf16, e4m3, e5m2, e2m1");
  }
}

}  // namespace
}  // namespace warpforge::ops
