// Packing block-scaled weights into the stream kernel's order
// (grouped_gemm.hpp, PackedWeightsLayout), on the host.
#include <string>

#include "grouped_gemm_problem.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/grouped_gemm.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

constexpr std::int64_t kLanes = 32, kLoadBytes = 16;

bool fp4(const PackedWeightsLayout& l) { return l.data == DType::e2m1; }
// A lane's piece of one row: 64 codes.
std::int64_t piece_bytes(const PackedWeightsLayout& l) { return fp4(l) ? 32 : 64; }
// Scale bytes of a lane: its two rows' blocks of the piece.
std::int64_t lane_scale_bytes(const PackedWeightsLayout& l) { return 2 * PackedWeightsLayout::kPieceCodes / l.vec; }

// Where code i (0..7) of a 32-bit word of FP4 codes is stored: the even
// codes in nibbles 0..3, the odd ones in 4..7 (c0 c2 c4 c6 c1 c3 c5 c7).
int fp4_nibble(int i) { return i % 2 == 0 ? i / 2 : 4 + i / 2; }

}  // namespace

std::int64_t PackedWeightsLayout::block_bytes() const { return kLanes * 2 * piece_bytes(*this); }
std::int64_t PackedWeightsLayout::scale_block_bytes() const { return kLanes * lane_scale_bytes(*this); }

std::string PackedWeightsLayout::describe() const {
  return block_scaled_format_name(data, scale, vec) + ", " + std::to_string(groups) +
         (groups == 1 ? " group" : " groups") + " of K " + std::to_string(k) + " x N " + std::to_string(n);
}

PackedWeights prepack_weights(const PackedWeightsLayout& l, std::span<const std::uint8_t> codes,
                              std::span<const std::uint8_t> scales) {
  std::vector<std::string> why = block_scaled_format_refusals(l.data, l.scale, l.vec);
  if (l.groups < 1 || l.k < 1 || l.n < 1)
    why.push_back("groups, K, N = " + std::to_string(l.groups) + ", " + std::to_string(l.k) + ", " +
                  std::to_string(l.n) + ": each must be at least 1");
  if (l.data == DType::e2m1 && l.k % 2 != 0)
    why.push_back("K " + std::to_string(l.k) + " with FP4 codes: two codes a byte need K even");
  if (why.empty()) {
    const std::int64_t row_bytes = fp4(l) ? l.k / 2 : l.k;
    if (static_cast<std::int64_t>(codes.size()) != l.groups * l.n * row_bytes)
      why.push_back("codes hold " + std::to_string(codes.size()) + " bytes; (G, N, K) k-major codes of " +
                    l.describe() + " take " + std::to_string(l.groups * l.n * row_bytes));
    const ScaleFactorLayout sf{l.n, l.k, l.groups, l.vec};
    if (static_cast<std::int64_t>(scales.size()) != sf.bytes())
      why.push_back("scales hold " + std::to_string(scales.size()) + " bytes; the 128x4 layout over N " +
                    std::to_string(l.n) + " rows, K " + std::to_string(l.k) + " and G " + std::to_string(l.groups) +
                    " takes " + std::to_string(sf.bytes()));
  }
  if (!why.empty()) {
    std::string all = "prepack_weights refused:";
    for (const auto& w : why) all += "\n  - " + w;
    throw OpsError(all);
  }

  PackedWeights out{l, std::vector<std::uint8_t>(static_cast<std::size_t>(l.code_bytes()), 0),
                    std::vector<std::uint8_t>(static_cast<std::size_t>(l.scale_bytes()), 0)};
  const ScaleFactorLayout sf{l.n, l.k, l.groups, l.vec};
  const std::int64_t piece = piece_bytes(l), loads_per_row = piece / kLoadBytes, lane_scales = lane_scale_bytes(l);
  const std::int64_t blocks_per_row_scale = PackedWeightsLayout::kPieceCodes / l.vec;
  auto code = [&](std::int64_t g, std::int64_t row, std::int64_t kk) -> std::uint8_t {
    if (row >= l.n || kk >= l.k) return 0;
    const std::int64_t at = g * l.n + row;
    if (!fp4(l)) return codes[static_cast<std::size_t>(at * l.k + kk)];
    return e2m1_at(codes, at * l.k + kk);
  };
  for (std::int64_t g = 0; g < l.groups; ++g)
    for (std::int64_t r = 0; r < l.row_tiles(); ++r)
      for (std::int64_t c = 0; c < l.chunks(); ++c) {
        const std::int64_t block = (g * l.row_tiles() + r) * l.chunks() + c;
        std::uint8_t* codes_out = out.codes.data() + block * l.block_bytes();
        std::uint8_t* scales_out = out.scales.data() + block * l.scale_block_bytes();
        for (std::int64_t lane = 0; lane < kLanes; ++lane) {
          const std::int64_t q = lane / 4, t = lane % 4;
          const std::int64_t k0 = c * PackedWeightsLayout::kChunk + t * PackedWeightsLayout::kPieceCodes;
          for (std::int64_t h = 0; h < 2; ++h) {
            const std::int64_t row = r * PackedWeightsLayout::kRowTile + q + 8 * h;
            for (std::int64_t byte = 0; byte < piece; ++byte) {
              const std::int64_t j = h * loads_per_row + byte / kLoadBytes;
              std::uint8_t& to = codes_out[j * kLanes * kLoadBytes + lane * kLoadBytes + byte % kLoadBytes];
              if (!fp4(l)) {
                to = code(g, row, k0 + byte);
                continue;
              }
              // Byte b of the piece is nibbles 2b, 2b + 1 of word b / 4: codes of that word in the packed order.
              const std::int64_t word = byte / 4;
              for (int half = 0; half < 2; ++half) {
                const int nibble = static_cast<int>(byte % 4) * 2 + half;
                for (int i = 0; i < 8; ++i)
                  if (fp4_nibble(i) == nibble) to |= static_cast<std::uint8_t>(code(g, row, k0 + 8 * word + i) << (4 * half));
              }
            }
            for (std::int64_t s = 0; s < blocks_per_row_scale; ++s) {
              const std::int64_t kb = k0 / l.vec + s;
              const bool inside = row < l.n && kb < sf.k_blocks();
              scales_out[lane * lane_scales + h * blocks_per_row_scale + s] =
                  inside ? scales[static_cast<std::size_t>(sf.offset(row, kb, g))] : 0;
            }
          }
        }
      }
  return out;
}

}  // namespace warpforge::ops
