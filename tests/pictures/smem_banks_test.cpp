// Bank conflicts of warp accesses over swizzled shared tiles, against counts
// worked out by hand, and the bank picture read back.
#include <gtest/gtest.h>

#include <set>

#include "pictures/docs_image.hpp"
#include "pictures/smem_banks.hpp"
#include "pictures/xml_reader.hpp"
#include "warpforge/error.hpp"

namespace warpforge::pictures {
namespace {

using layout::SmemSwizzle;

layout::BankConflicts conflicts(SmemTile tile, const std::string& pattern) {
  const WarpAccess a = warp_access(tile, pattern);
  return layout::count_bank_conflicts(a.byte_addresses, a.access_bytes);
}

SmemTile bf16_rows_of_128_bytes(SmemSwizzle swizzle) {
  return {8, 64, 2, swizzle};
}

TEST(SmemBanks, Swizzle128HasNoConflictForLdmatrixRows) {
  // Row r's chunk c sits at chunk c ^ r: the 8 rows of a matrix cover all 32 banks.
  const auto c = conflicts(bf16_rows_of_128_bytes(SmemSwizzle::b128), "ldmatrix");
  EXPECT_EQ(c.phases, 4);
  EXPECT_EQ(c.wavefronts, 4);
  EXPECT_EQ(c.worst_way, 1);
}

TEST(SmemBanks, NoSwizzleIsTheKnown8WayConflict) {
  // Unswizzled 128-byte rows: the 8 rows of one 16-byte column all hit banks 0-3.
  const auto ld = conflicts(bf16_rows_of_128_bytes(SmemSwizzle::none), "ldmatrix");
  EXPECT_EQ(ld.worst_way, 8);
  EXPECT_EQ(ld.wavefronts, 32);
  EXPECT_EQ(ld.extra_wavefronts(), 28);
  // The same column read 16 bytes a lane: 4 phases of 8 rows, 8-way each.
  const auto col16 = conflicts(bf16_rows_of_128_bytes(SmemSwizzle::none), "cols:16");
  EXPECT_EQ(col16.worst_way, 8);
  EXPECT_EQ(col16.wavefronts, 32);
  EXPECT_EQ(conflicts(bf16_rows_of_128_bytes(SmemSwizzle::b128), "cols:16").wavefronts, 4);
  // One bf16 a lane down the columns: lanes 8i..8i+7 read rows 0-7 of column
  // i; columns 0 and 1 share word 0 and columns 2 and 3 word 1, so banks 0
  // and 1 each serve 8 words: 8-way in one phase.
  const auto col2 = conflicts(bf16_rows_of_128_bytes(SmemSwizzle::none), "cols:2");
  EXPECT_EQ(col2.phases, 1);
  EXPECT_EQ(col2.wavefronts, 8);
  EXPECT_EQ(conflicts(bf16_rows_of_128_bytes(SmemSwizzle::b128), "cols:2").wavefronts, 1);
}

TEST(SmemBanks, NarrowerSwizzlesAndRows) {
  // 64-byte rows: unswizzled, rows r and r+2 share banks (two rows per 128
  // bytes): 4-way; the 64-byte swizzle makes chunk c ^ (r/2 mod 4): free.
  EXPECT_EQ(conflicts({8, 32, 2, SmemSwizzle::none}, "ldmatrix").worst_way, 4);
  EXPECT_EQ(conflicts({8, 32, 2, SmemSwizzle::b64}, "ldmatrix").worst_way, 1);
  // 32-byte rows: four rows per 128 bytes, so 2-way unswizzled; the 32-byte
  // swizzle (chunk c ^ (r/4 mod 2)) frees it.
  EXPECT_EQ(conflicts({16, 16, 2, SmemSwizzle::none}, "ldmatrix").worst_way, 2);
  EXPECT_EQ(conflicts({16, 16, 2, SmemSwizzle::b32}, "ldmatrix").worst_way, 1);
  // Along a row, 4 bytes a lane: one wavefront whatever the swizzle.
  EXPECT_EQ(conflicts(bf16_rows_of_128_bytes(SmemSwizzle::none), "rows:4").wavefronts, 1);
  EXPECT_EQ(conflicts(bf16_rows_of_128_bytes(SmemSwizzle::b128), "rows:4").wavefronts, 1);
  // f32 down a column of a 32-row, 128-byte-row tile: all 32 rows in bank 0.
  EXPECT_EQ(conflicts({32, 32, 4, SmemSwizzle::none}, "cols:4").worst_way, 32);
  EXPECT_EQ(conflicts({32, 32, 4, SmemSwizzle::b128}, "cols:4").worst_way, 4);
}

TEST(SmemBanks, RefusesBadTilesAndPatterns) {
  auto refusal = [](SmemTile t, const std::string& p) -> std::string {
    try {
      warp_access(t, p);
    } catch (const LayoutError& e) {
      return e.what();
    }
    return "accepted";
  };
  const SmemTile ok = bf16_rows_of_128_bytes(SmemSwizzle::b128);
  EXPECT_EQ(
      refusal(ok, "diagonal"),
      "access pattern 'diagonal'; accepted: ldmatrix, rows:W or cols:W (W = 1, 2, 4, 8, 16 bytes)");
  EXPECT_EQ(refusal(ok, "rows:3"),
            "access pattern 'rows:3': width 3 bytes; accepted: 1, 2, 4, 8 or 16, and at least one "
            "element (2 bytes)");
  EXPECT_EQ(refusal(ok, "rows:1"),
            "access pattern 'rows:1': width 1 bytes; accepted: 1, 2, 4, 8 or 16, and at least one "
            "element (2 bytes)");
  EXPECT_EQ(refusal({8, 32, 2, SmemSwizzle::b128}, "rows:4"),
            "shared tile: rows of 64 bytes under the 128B swizzle; it permutes rows of exactly 128 "
            "bytes (what TMA writes with it): give --cols 64");
  EXPECT_EQ(
      refusal({8, 60, 2, SmemSwizzle::none}, "rows:4"),
      "shared tile: a row of 60 x 2 bytes = 120 bytes; rows must be whole 16-byte chunks (the "
      "swizzles move 16-byte chunks)");
  EXPECT_EQ(refusal({1, 8, 2, SmemSwizzle::none}, "rows:16"),
            "access pattern 'rows:16' reads 512 bytes; the 1 x 8 tile holds 16");
  EXPECT_NE(refusal({8, 32, 4, SmemSwizzle::b128}, "ldmatrix").find("2-byte elements"),
            std::string::npos);
}

TEST(SmemBanks, PictureCellsCarryTheirBanks) {
  const SmemTile tile = bf16_rows_of_128_bytes(SmemSwizzle::b128);
  const WarpAccess access = warp_access(tile, "ldmatrix");
  const Grid grid = bank_grid(tile, access);
  const auto svg = testing::parse_xml(to_svg(grid));
  const auto cells = svg.all("g", "cell");
  ASSERT_EQ(cells.size(), 8u * 32u);  // 8 rows of 32 words
  std::set<int64_t> row0_banks;
  for (const auto* cell : cells) {
    const int64_t r = std::stoll(cell->attribute("data-row")),
                  w = std::stoll(cell->attribute("data-col"));
    const int64_t address = tile.byte_address(r, 2 * w);
    EXPECT_EQ(std::stoll(cell->attribute("data-address")), address);
    EXPECT_EQ(std::stoll(cell->attribute("data-bank")), layout::bank_of(address));
    // Swizzle<3,4,3> in bytes: 16-byte chunk c of row r lands at chunk c ^ (r % 8).
    EXPECT_EQ(address, r * 128 + 16 * ((w / 4) ^ (r % 8)) + 4 * (w % 4));
  }
  EXPECT_EQ(
      grid.notes.back(),
      "bank conflicts: 4 phases of 128 bytes, 4 wavefronts (0 beyond one per phase), worst 1-way");
  // The ldmatrix reads words 0-15 of each row (blocks 0-3 of 8 columns): marked.
  EXPECT_TRUE(grid.at(7, 15).marked);
  EXPECT_FALSE(grid.at(7, 16).marked);
}

TEST(SmemBanks, DocsPicturesAreWhatTheTilesDraw) {
  for (auto [mode, image] : {std::pair{SmemSwizzle::b128, "smem-swizzle-128b-ldmatrix.svg"},
                             std::pair{SmemSwizzle::none, "smem-swizzle-none-ldmatrix.svg"}}) {
    const SmemTile tile = bf16_rows_of_128_bytes(mode);
    EXPECT_EQ(testing::docs_image(image), to_svg(bank_grid(tile, warp_access(tile, "ldmatrix"))))
        << image << ": run scripts/draw-docs-pictures.sh";
  }
}

}  // namespace
}  // namespace warpforge::pictures
