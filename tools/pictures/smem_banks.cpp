#include "smem_banks.hpp"

#include <set>

#include "warpforge/error.hpp"

namespace warpforge::pictures {

void SmemTile::check() const {
  if (rows < 1 || cols < 1) {
    throw LayoutError("shared tile " + std::to_string(rows) + " x " + std::to_string(cols) +
                      ": rows and columns must be >= 1");
  }
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8) {
    throw LayoutError("shared tile: " + std::to_string(element_bytes) +
                      "-byte elements; accepted: 1, 2, 4 or 8 bytes");
  }
  if (row_bytes() % 16 != 0) {
    throw LayoutError("shared tile: a row of " + std::to_string(cols) + " x " +
                      std::to_string(element_bytes) + " bytes = " + std::to_string(row_bytes()) +
                      " bytes; rows must be whole 16-byte chunks (the swizzles move 16-byte "
                      "chunks)");
  }
  if (swizzle != layout::SmemSwizzle::none && row_bytes() != layout::swizzle_bytes(swizzle)) {
    throw LayoutError("shared tile: rows of " + std::to_string(row_bytes()) + " bytes under the " +
                      layout::to_string(swizzle) + " swizzle; it permutes rows of exactly " +
                      std::to_string(layout::swizzle_bytes(swizzle)) +
                      " bytes (what TMA writes with it): give --cols " +
                      std::to_string(layout::swizzle_bytes(swizzle) / element_bytes));
  }
}

int64_t SmemTile::byte_address(int64_t row, int64_t col) const {
  return layout::smem_swizzle(swizzle, element_bytes)(row * cols + col) * element_bytes;
}

namespace {

int access_width(const std::string& pattern, const std::string& text, int element_bytes) {
  const bool allowed = text == "1" || text == "2" || text == "4" || text == "8" || text == "16";
  if (!allowed || std::stoi(text) < element_bytes) {
    throw LayoutError("access pattern '" + pattern + "': width " + text + " bytes; accepted: 1, " +
                      "2, 4, 8 or 16, and at least one element (" + std::to_string(element_bytes) +
                      " bytes)");
  }
  return std::stoi(text);
}

// The physical address of logical byte `logical` of the tile.
int64_t physical(const SmemTile& tile, int64_t logical) {
  const int64_t element = logical / tile.element_bytes;
  return tile.byte_address(element / tile.cols, element % tile.cols) + logical % tile.element_bytes;
}

void require_bytes(const SmemTile& tile, const std::string& pattern, int64_t needed) {
  if (needed > tile.rows * tile.row_bytes()) {
    throw LayoutError("access pattern '" + pattern + "' reads " + std::to_string(needed) +
                      " bytes; the " + std::to_string(tile.rows) + " x " +
                      std::to_string(tile.cols) + " tile holds " +
                      std::to_string(tile.rows * tile.row_bytes()));
  }
}

}  // namespace

WarpAccess warp_access(const SmemTile& tile, const std::string& pattern) {
  tile.check();
  WarpAccess access;
  if (pattern == "ldmatrix") {
    if (tile.element_bytes != 2 || tile.rows % 8 != 0 || tile.cols < 8 ||
        (tile.rows / 8) * (tile.cols / 8) < 4) {
      throw LayoutError(
          "access pattern 'ldmatrix' reads four 8 x 8 blocks of 2-byte elements; "
          "the tile is " +
          std::to_string(tile.rows) + " x " + std::to_string(tile.cols) + " of " +
          std::to_string(tile.element_bytes) +
          "-byte elements (rows must be a multiple of 8, with room for 4 blocks)");
    }
    const int64_t block_rows = tile.rows / 8;
    for (int64_t lane = 0; lane < 32; ++lane) {
      const int64_t matrix = lane / 8;
      const int64_t row = 8 * (matrix % block_rows) + lane % 8;
      access.byte_addresses.push_back(tile.byte_address(row, 8 * (matrix / block_rows)));
    }
    access.access_bytes = 16;
    access.description = "ldmatrix.x4: lanes 8i..8i+7 read the rows of 8 x 8 block i";
    return access;
  }
  const size_t colon = pattern.find(':');
  const std::string kind = pattern.substr(0, colon);
  if (colon == std::string::npos || (kind != "rows" && kind != "cols")) {
    throw LayoutError("access pattern '" + pattern +
                      "'; accepted: ldmatrix, rows:W or cols:W (W = 1, 2, 4, 8, 16 bytes)");
  }
  const int w = access_width(pattern, pattern.substr(colon + 1), tile.element_bytes);
  access.access_bytes = w;
  require_bytes(tile, pattern, 32 * w);
  for (int64_t lane = 0; lane < 32; ++lane) {
    const int64_t logical =
        kind == "rows" ? lane * w : (lane % tile.rows) * tile.row_bytes() + w * (lane / tile.rows);
    access.byte_addresses.push_back(physical(tile, logical));
  }
  access.description = kind == "rows"
                           ? "each lane reads " + std::to_string(w) + " bytes, along the rows"
                           : "each lane reads " + std::to_string(w) + " bytes, down the columns";
  return access;
}

Grid bank_grid(const SmemTile& tile, const WarpAccess& access) {
  tile.check();
  const int64_t words_per_row = tile.row_bytes() / layout::kBankBytes;
  Grid grid =
      make_grid("shared tile " + std::to_string(tile.rows) + " x " + std::to_string(tile.cols) +
                    " x " + std::to_string(tile.element_bytes) + " B, swizzle " +
                    layout::to_string(tile.swizzle) + ": bank of each 4-byte word",
                tile.rows, words_per_row);
  grid.col_name = "word (4 bytes) of the row";
  grid.colours = layout::kSharedBanks;
  std::set<int64_t> read;
  for (int64_t address : access.byte_addresses) {
    for (int64_t b = 0; b < access.access_bytes; b += layout::kBankBytes)
      read.insert((address + b) / 4);
  }
  for (int64_t r = 0; r < tile.rows; ++r) {
    for (int64_t w = 0; w < words_per_row; ++w) {
      const int64_t logical = r * tile.row_bytes() + w * layout::kBankBytes;
      const int64_t address = physical(tile, logical);
      const int64_t bank = layout::bank_of(address);
      GridCell& cell = grid.at(r, w);
      cell.label = std::to_string(bank);
      cell.colour = bank;
      cell.marked = read.count(address / 4) > 0;
      cell.data = {{"bank", bank}, {"address", address}};
    }
  }
  const layout::BankConflicts c =
      layout::count_bank_conflicts(access.byte_addresses, access.access_bytes);
  grid.notes = {
      "cell (r, w): bytes 4w..4w+3 of row r, labelled with the bank the swizzle puts them in",
      "marked ([n] in the terminal, a black border in SVG): the words the access reads",
      "access: " + access.description,
      "bank conflicts: " + std::to_string(c.phases) + " phases of 128 bytes, " +
          std::to_string(c.wavefronts) + " wavefronts (" + std::to_string(c.extra_wavefronts()) +
          " beyond one per phase), worst " + std::to_string(c.worst_way) + "-way",
  };
  return grid;
}

}  // namespace warpforge::pictures
