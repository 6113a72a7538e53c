#include <gtest/gtest.h>

#include "warpforge/error.hpp"
#include "warpforge/layout/wgmma_smem_layout.hpp"

namespace warpforge::layout {
namespace {

const SmemSwizzle kModes[] = {SmemSwizzle::none, SmemSwizzle::b32, SmemSwizzle::b64,
                              SmemSwizzle::b128};

TEST(WgmmaCanonicalLayout, MatchesThePtxIsaExample) {
  // PTX ISA 9.7.15.5.1.2.1.3, "K-Major, no-swizzling and tf32 type": exact
  // layout Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64)), LBO = 64 * 4 bytes,
  // SBO = 32 * 4 bytes.
  SwizzledLayout l = wgmma_canonical_layout(Major::k, SmemSwizzle::none, 32, 16, 16, 256, 128);
  EXPECT_EQ(to_string(l.layout()), "((8,2),(4,4)):((4,32),(1,64))");
  EXPECT_EQ(l.swizzle(), Swizzle(0, 2, 3));  // Swizzle<0,4,3> on bytes: the identity
}

TEST(WgmmaCanonicalLayout, SpellsEachModeOfTheTable) {
  // bf16, T = 8: one wgmma's 64 x 16 A operand.
  EXPECT_EQ(to_string(wgmma_canonical_layout(Major::k, SmemSwizzle::b128, 16, 64, 16, 16, 1024)),
            "Swizzle<3,3,3> o ((8,8),(8,2)):((64,512),(1,8))");
  EXPECT_EQ(to_string(wgmma_canonical_layout(Major::k, SmemSwizzle::b32, 16, 64, 16, 16, 256)),
            "Swizzle<1,3,3> o ((8,8),(8,2)):((16,128),(1,8))");
  EXPECT_EQ(to_string(wgmma_canonical_layout(Major::mn, SmemSwizzle::b64, 16, 64, 16, 1024, 2048)),
            "Swizzle<2,3,3> o ((8,4,2),(8,2)):((1,8,512),(32,1024))");
  EXPECT_EQ(to_string(wgmma_canonical_layout(Major::mn, SmemSwizzle::none, 16, 64, 16, 256, 128)),
            "Swizzle<0,3,3> o ((8,8),(8,2)):((1,64),(8,128))");
}

// Byte offset, in `tile`, of the element at (mn, k): how a descriptor's LBO
// and SBO are read off a tile built from atoms.
int64_t byte_offset(const SwizzledLayout& tile, int64_t mn, int64_t k, int bits) {
  return tile.layout()(mn, k) * bits / 8;
}

// For every mode, major-ness and element size, and several tile shapes: the
// canonical layout, given the LBO and SBO read off a tile of atoms, addresses
// the same elements as the tile over one wgmma's K (32 bytes).
TEST(WgmmaCanonicalLayout, AgreesWithTilesOfAtoms) {
  int checked = 0;
  for (Major major : {Major::k, Major::mn}) {
    for (SmemSwizzle mode : kModes) {
      for (int bits : {8, 16, 32}) {
        const int64_t t = 128 / bits, w = swizzle_bytes(mode) / 16;
        const int64_t k_per_wgmma = 256 / bits;  // 32 bytes of K
        SwizzledLayout atom = wgmma_smem_atom(major, mode, bits);
        const int64_t atom_mn = major == Major::k ? 8 : w * t;
        const int64_t atom_k = major == Major::k ? w * t : 8;
        for (int64_t mn_atoms : {1, 2, 8}) {
          for (int64_t k_atoms : {1, 2, 3}) {
            int64_t mn = atom_mn * mn_atoms, k = atom_k * k_atoms;
            if (k < k_per_wgmma) continue;
            SwizzledLayout tile = tile_to_shape(atom, {mn, k});
            // Offsets the layout has no second group for are not read: 16 stands in.
            int64_t lbo = 16, sbo = 16;
            if (major == Major::k) {
              sbo = mn >= 16 ? byte_offset(tile, 8, 0, bits) : 16;
              if (mode == SmemSwizzle::none) lbo = byte_offset(tile, 0, t, bits);
            } else if (mode == SmemSwizzle::none) {
              sbo = mn > t ? byte_offset(tile, t, 0, bits) : 16;
              lbo = k > 8 ? byte_offset(tile, 0, 8, bits) : 16;
            } else {
              lbo = mn > w * t ? byte_offset(tile, w * t, 0, bits) : 16;
              sbo = k > 8 ? byte_offset(tile, 0, 8, bits) : 16;
            }
            SwizzledLayout canonical =
                wgmma_canonical_layout(major, mode, bits, mn, k_per_wgmma, lbo, sbo);
            ASSERT_EQ(canonical.swizzle(), tile.swizzle());
            for (int64_t i = 0; i < mn; ++i) {
              for (int64_t j = 0; j < k_per_wgmma; ++j) {
                ASSERT_EQ(canonical(i, j), tile(i, j))
                    << to_string(canonical) << " vs " << to_string(tile) << " at " << i << "," << j;
              }
            }
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(WgmmaCanonicalLayout, RefusesWhatTheDescriptorCannotExpress) {
  try {
    wgmma_canonical_layout(Major::k, SmemSwizzle::b32, 16, 64, 32, 16, 256);
    FAIL() << "32 bf16 of K do not fit a 32-byte swizzled row";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("k = 32 for K-major, 32B swizzle, 16-bit elements"),
              std::string::npos);
  }
  try {
    wgmma_canonical_layout(Major::k, SmemSwizzle::b128, 16, 60, 16, 16, 1024);
    FAIL() << "mn must be a multiple of 8";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("mn = 60"), std::string::npos);
  }
  EXPECT_THROW(wgmma_canonical_layout(Major::mn, SmemSwizzle::b128, 16, 64, 12, 1024, 2048),
               LayoutError);
  EXPECT_THROW(wgmma_canonical_layout(Major::k, SmemSwizzle::none, 16, 64, 16, 100, 128),
               LayoutError);
  EXPECT_THROW(wgmma_canonical_layout(Major::k, SmemSwizzle::none, 16, 64, 16, 128, 0),
               LayoutError);
  EXPECT_THROW(wgmma_canonical_layout(Major::k, SmemSwizzle::none, 4, 64, 32, 128, 128),
               LayoutError);
  EXPECT_THROW(wgmma_smem_atom(Major::mn, SmemSwizzle::b64, 64), LayoutError);
}

}  // namespace
}  // namespace warpforge::layout
