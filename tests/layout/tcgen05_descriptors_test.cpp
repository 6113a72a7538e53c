// The tcgen05 descriptors against the bit tables of PTX ISA 9.7.16.4.1
// (shared-memory descriptor) and 9.7.16.4.2 (instruction descriptor).
#include <gtest/gtest.h>

#include <string>

#include "warpforge/error.hpp"
#include "warpforge/layout/tcgen05_instr_descriptor.hpp"
#include "warpforge/layout/tcgen05_smem_descriptor.hpp"

namespace warpforge::layout {
namespace {

TEST(Tcgen05SmemDescriptor, FieldsLandInTheirBits) {
  // 128-byte swizzle, start 0x400, LBO 16, SBO 1024: a K-major tile.
  Tcgen05SmemDescriptor d{0x400, 16, 1024, SmemSwizzle::b128};
  EXPECT_EQ(d.encode(), (2ull << 61) | (1ull << 46) | (64ull << 32) | (1ull << 16) | 0x40ull);
  // The version bits are there even in an all-zero descriptor; the swizzle codes are 0, 2, 4, 6.
  EXPECT_EQ(Tcgen05SmemDescriptor{}.encode(), 1ull << 46);
  EXPECT_EQ((Tcgen05SmemDescriptor{0, 0, 0, SmemSwizzle::b64}.encode()),
            (4ull << 61) | (1ull << 46));
  EXPECT_EQ((Tcgen05SmemDescriptor{0, 0, 0, SmemSwizzle::b32}.encode()),
            (6ull << 61) | (1ull << 46));
  EXPECT_EQ((Tcgen05SmemDescriptor{0, 0, 0, SmemSwizzle::none, 5, true}.encode()),
            (5ull << 49) | (1ull << 52) | (1ull << 46));
  EXPECT_EQ((Tcgen05SmemDescriptor{0x3FFF0, 0x3FFF0, 0x3FFF0, SmemSwizzle::none}.encode()),
            0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 | 1ull << 46);
}

TEST(Tcgen05SmemDescriptor, DecodeInvertsEncode) {
  for (SmemSwizzle s : {SmemSwizzle::none, SmemSwizzle::b32, SmemSwizzle::b64, SmemSwizzle::b128})
    for (std::uint32_t start : {0u, 16u, 0x3FFF0u})
      for (std::uint32_t lbo : {0u, 16u, 8192u})
        for (int base : {0, 7}) {
          Tcgen05SmemDescriptor d{start, lbo, 1024, s, base, base == 7};
          EXPECT_EQ(Tcgen05SmemDescriptor::decode(d.encode()), d);
        }
}

TEST(Tcgen05SmemDescriptor, RefusesWhatItCannotHold) {
  try {
    Tcgen05SmemDescriptor{24, 0, 0, SmemSwizzle::none}.encode();
    FAIL() << "start address 24 was accepted";
  } catch (const LayoutError& e) {
    EXPECT_NE(
        std::string(e.what()).find("tcgen05 shared-memory descriptor: start address 24 bytes"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW((Tcgen05SmemDescriptor{0, 0, 0, SmemSwizzle::none, 8}.encode()), LayoutError);
  // A wgmma-format descriptor (no version bits) and the 32-byte-atom mode are refused by decode.
  EXPECT_THROW(Tcgen05SmemDescriptor::decode(1ull << 62), LayoutError);
  EXPECT_THROW(Tcgen05SmemDescriptor::decode((1ull << 61) | (1ull << 46)), LayoutError);
}

TEST(Tcgen05InstrDescriptor, DenseKindsFollowTheTable) {
  // kind::f16, bf16 x bf16 -> f32, M = 128, N = 256, K-major: D type 1 at bit 4,
  // types 1 at bits 7 and 10, N >> 3 = 32 at bit 17, M >> 4 = 8 at bit 24.
  Tcgen05InstrDescriptor d;
  d.n = 256;
  EXPECT_EQ(d.encode(), (1u << 4) | (1u << 7) | (1u << 10) | (32u << 17) | (8u << 24));
  // f16 x f16 -> f16, M = 64, N = 8, both MN-major, A negated.
  Tcgen05InstrDescriptor h{
      Tcgen05Element::f16, Tcgen05Element::f16, false, 64, 8, true, true, true};
  EXPECT_EQ(h.encode(), (1u << 13) | (1u << 15) | (1u << 16) | (1u << 17) | (4u << 24));
  // kind::tf32 is type 2; kind::f8f6f4 e5m2 x e2m1 is 1 and 5.
  Tcgen05InstrDescriptor t{Tcgen05Element::tf32, Tcgen05Element::tf32};
  EXPECT_EQ(t.encode(), (1u << 4) | (2u << 7) | (2u << 10) | (16u << 17) | (8u << 24));
  Tcgen05InstrDescriptor f{Tcgen05Element::e5m2, Tcgen05Element::e2m1};
  EXPECT_EQ(f.encode(), (1u << 4) | (1u << 7) | (5u << 10) | (16u << 17) | (8u << 24));
}

TEST(Tcgen05InstrDescriptor, BlockScaledKindsFollowTheTable) {
  // MXFP8: e4m3 x e4m3, ue8m0 (bit 23), M = 128, N = 128, scale IDs 2 (A, bit 29) and 1 (B, bit 4).
  Tcgen05InstrDescriptor mx{Tcgen05Element::e4m3, Tcgen05Element::e4m3};
  mx.scaling = Tcgen05Scaling::mxf8f6f4_ue8m0;
  mx.scale_a_id = 2;
  mx.scale_b_id = 1;
  EXPECT_EQ(mx.encode(), (1u << 4) | (16u << 17) | (1u << 23) | (8u << 24) | (2u << 29));
  // e2m1 is 5 in kind::mxf8f6f4 and 1 in the packed-fp4 kinds; NVFP4 (ue4m3) clears bit 23.
  Tcgen05InstrDescriptor fp6{Tcgen05Element::e2m1, Tcgen05Element::e3m2};
  fp6.scaling = Tcgen05Scaling::mxf8f6f4_ue8m0;
  EXPECT_EQ(fp6.encode(), (5u << 7) | (4u << 10) | (16u << 17) | (1u << 23) | (8u << 24));
  Tcgen05InstrDescriptor nv{Tcgen05Element::e2m1, Tcgen05Element::e2m1};
  nv.n = 64;
  nv.scaling = Tcgen05Scaling::fp4_ue4m3;
  EXPECT_EQ(nv.encode(), (1u << 7) | (1u << 10) | (8u << 17) | (8u << 24));
  nv.scaling = Tcgen05Scaling::fp4_ue8m0;
  EXPECT_EQ(nv.encode(), (1u << 7) | (1u << 10) | (8u << 17) | (1u << 23) | (8u << 24));
}

TEST(Tcgen05InstrDescriptor, RefusesFieldsOutsideTheIsa) {
  auto refused = [](Tcgen05InstrDescriptor d, const std::string& needle) {
    try {
      d.encode();
      ADD_FAILURE() << "accepted; expected a refusal naming " << needle;
    } catch (const LayoutError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  Tcgen05InstrDescriptor d;
  d.m = 96;
  refused(d, "M = 96");
  d = {};
  d.n = 260;
  refused(d, "N = 260; a multiple of 8 in 8..256");
  refused({Tcgen05Element::f16, Tcgen05Element::bf16}, "A f16 with B bf16");
  Tcgen05InstrDescriptor s{Tcgen05Element::e4m3, Tcgen05Element::e4m3};
  s.scaling = Tcgen05Scaling::fp4_ue8m0;
  refused(s, "A is e4m3; kinds mxf4 and mxf4nvf4 take e2m1 only");
  s.scaling = Tcgen05Scaling::mxf8f6f4_ue8m0;
  s.m = 64;
  refused(s, "block-scaled MMAs take M = 128 or 256");
  s.m = 128;
  s.scale_a_id = 4;
  refused(s, "scale-factor ID 4");
  s.scale_a_id = 0;
  s.d_f32 = false;
  refused(s, "an f16 D with block scaling");
  Tcgen05InstrDescriptor mn{Tcgen05Element::e2m1, Tcgen05Element::e2m1};
  mn.a_mn_major = true;
  refused(mn, "MN-major fp6/fp4");
}

}  // namespace
}  // namespace warpforge::layout
