#include <gtest/gtest.h>

#include "warpforge/error.hpp"
#include "warpforge/layout/wgmma_descriptor.hpp"

namespace warpforge::layout {
namespace {

TEST(WgmmaDescriptor, FieldsLandInTheirBits) {
  // 128-byte swizzle, start 0x400, LBO 16, SBO 1024: the K-major tile every
  // Hopper GEMM feeds wgmma (ISA 9.7.15.5.1.2.2 bit table).
  WgmmaDescriptor d{0x400, 16, 1024, SmemSwizzle::b128};
  EXPECT_EQ(d.encode(), (1ull << 62) | (64ull << 32) | (1ull << 16) | 0x40ull);
  EXPECT_EQ((WgmmaDescriptor{0, 0, 0, SmemSwizzle::b64}.encode()), 2ull << 62);
  EXPECT_EQ((WgmmaDescriptor{0, 0, 0, SmemSwizzle::b32}.encode()), 3ull << 62);
  EXPECT_EQ((WgmmaDescriptor{0x3FFF0, 0x3FFF0, 0x3FFF0, SmemSwizzle::none}.encode()),
            0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32);
}

TEST(WgmmaDescriptor, DecodeInvertsEncode) {
  for (SmemSwizzle s : {SmemSwizzle::none, SmemSwizzle::b32, SmemSwizzle::b64, SmemSwizzle::b128})
    for (std::uint32_t start : {0u, 16u, 1024u, 0x3FFF0u})
      for (std::uint32_t lbo : {0u, 16u, 8192u})
        for (std::uint32_t sbo : {16u, 1024u, 0x3FFF0u}) {
          WgmmaDescriptor d{start, lbo, sbo, s};
          EXPECT_EQ(WgmmaDescriptor::decode(d.encode()), d);
        }
}

TEST(WgmmaDescriptor, RefusesOffsetsTheFieldsCannotHold) {
  for (std::uint32_t bad : {8u, 17u, 1u << 18}) {
    try {
      WgmmaDescriptor{bad, 0, 0, SmemSwizzle::none}.encode();
      FAIL() << bad << " was accepted";
    } catch (const LayoutError& e) {
      EXPECT_NE(std::string(e.what()).find("start address " + std::to_string(bad)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("multiple of 16 below 262144"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((WgmmaDescriptor{0, 24, 0, SmemSwizzle::none}.encode()), LayoutError);
  EXPECT_THROW((WgmmaDescriptor{0, 0, 1u << 18, SmemSwizzle::none}.encode()), LayoutError);
}

}  // namespace
}  // namespace warpforge::layout
