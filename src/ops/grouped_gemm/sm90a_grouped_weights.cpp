#include "sm90a_grouped_weights.hpp"

#include <utility>
#include <vector>

#include "packed_weight_stream.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {
std::uint32_t imm(std::int64_t v) { return static_cast<std::uint32_t>(v); }
constexpr std::uint32_t kLoadBytes = 16, kRowBytes = 128;  // a packed load; a bf16 tile row (64 of K)

// A map over packed bytes (u8).
runtime::TensorMapDesc byte_map(runtime::DevicePtr address, std::vector<std::uint64_t> dims,
                                std::vector<std::uint64_t> strides, std::vector<std::uint32_t> box) {
  runtime::TensorMapDesc d;
  d.dtype = DType::u8;
  d.address = address;
  d.dims = std::move(dims);
  d.strides_bytes = std::move(strides);
  d.box = std::move(box);
  return d;
}
}  // namespace

GroupedWeightTiles::GroupedWeightTiles(const GroupedGemmProblem& p, int tile_n) : p_(p), tile_n_(tile_n) {}

std::uint32_t GroupedWeightTiles::codes_bytes() const {
  return imm(row_tiles() * loads() * 8 * kLoadBytes);
}

std::uint32_t GroupedWeightTiles::stage_bytes() const {
  return codes_bytes() + imm(row_tiles() * 32 * lane_scales());
}

// Dims, innermost first: the 64 bytes of a q's four lanes (lane 4q + t at
// 16t), q (8, 64 bytes apart), load j (J, 512 apart), chunk c (a block
// apart), row tile g·R + r (C blocks apart). The box: one lane's 16 bytes
// (coordinate 16t), every q and j, one chunk, the tile's row tiles.
runtime::TensorMapDesc GroupedWeightTiles::codes_map(runtime::DevicePtr codes) const {
  const PackedWeightsLayout l = p_.packed_layout();
  const auto block = static_cast<std::uint64_t>(l.block_bytes()), chunks = static_cast<std::uint64_t>(l.chunks());
  return byte_map(codes,
                  {4 * kLoadBytes, 8, static_cast<std::uint64_t>(loads()), chunks,
                   static_cast<std::uint64_t>(l.groups * l.row_tiles())},
                  {4 * kLoadBytes, 32 * kLoadBytes, block, chunks * block},
                  {kLoadBytes, 8, static_cast<std::uint32_t>(loads()), 1, static_cast<std::uint32_t>(row_tiles())});
}

// A block's scales (32 lanes x S bytes), chunk c, row tile g·R + r.
runtime::TensorMapDesc GroupedWeightTiles::scales_map(runtime::DevicePtr scales) const {
  const PackedWeightsLayout l = p_.packed_layout();
  const auto block = static_cast<std::uint64_t>(l.scale_block_bytes()), chunks = static_cast<std::uint64_t>(l.chunks());
  return byte_map(scales, {block, chunks, static_cast<std::uint64_t>(l.groups * l.row_tiles())},
                  {block, chunks * block},
                  {static_cast<std::uint32_t>(block), 1, static_cast<std::uint32_t>(row_tiles())});
}

void GroupedWeightTiles::load(Kernel& k, const Reg& stage, const Reg& map_codes, const Reg& map_scales,
                              const Reg& group, const Reg& n0, const Reg& kb, const Reg& full) const {
  const PackedWeightsLayout l = p_.packed_layout();
  Reg chunk = kb >> 2u;
  Reg row_tile = group * imm(l.row_tiles()) + (n0 >> 4u);
  k.tma_load(at(stage), map_codes, {(kb & 3u) << 4u, 0u, 0u, chunk, row_tile}, at(full));
  k.tma_load(at(stage + codes_bytes()), map_scales, {0u, chunk, row_tile}, at(full));
}

// Thread 32v + 4q + u: rows q, q + 8 of row tiles (tile_n / 128)·v + i, the
// pieces of lane 4q + kb % 4 of each, codes [16u, 16u + 16) of them (FP4 8
// bytes at load 2h + u / 2, byte 8(u % 2); FP8 16 bytes at load 4h + u),
// their scale block 16u / vec of the lane's S bytes (row q's, then q + 8's).
// PackedWeightStream converts them as the thread's "chunk" of one 16-code
// group a row: its scale byte in both bytes of the register the chunk's
// scales hold two to (the second byte is the piece's next block, unused).
void GroupedWeightTiles::convert(Kernel& k, const Reg& tid, const Reg& stage, const Reg& kb, const Reg& tile) const {
  PackedWeightStream stream(k, p_.packed_layout(), 1, 32, tid);
  const int per_warp = row_tiles() / 8, s = lane_scales();
  Reg lane = tid & 31u, q = lane >> 2u, u = lane & 3u;
  Reg first_tile = (tid >> 5u) * imm(per_warp);
  Reg codes = stage + first_tile * imm(loads() * 8 * kLoadBytes) + (q << 4u) +
              (fp4() ? Reg(((u >> 1u) << 7u) + ((u & 1u) << 3u)) : Reg(u << 7u));
  Reg scales = stage + imm(codes_bytes()) + first_tile * imm(32 * s) + ((q << 2u) + (kb & 3u)) * imm(s) +
               (p_.vec == 32 ? Reg(u >> 1u) : u);
  PackedWeightStream::Chunk chunk;
  for (int i = 0; i < per_warp; ++i)
    for (int h = 0; h < 2; ++h) {
      Regs words = k.regs(b32, fp4() ? 2 : 4);
      const std::int64_t piece = (i * loads() + h * loads() / 2) * 8 * kLoadBytes;
      k.ld(Space::shared, b32, words, at(codes, piece));
      Reg narrow = k.reg(u16), byte = k.reg(u32);
      k.ld(Space::shared, u8, narrow, at(scales, static_cast<std::int64_t>(i * 32 * s + h * s / 2)));
      k.cvt(byte, narrow);
      Reg both = byte * 0x101u;
      chunk.words.push_back(words);
      chunk.scales.push_back(p_.vec == 32 ? Regs{both} : Regs{both, both});
    }
  // Row r of the tile (its warpgroup's half included) and its 16-byte pieces 2u, 2u + 1 in the swizzle.
  auto run = [&](bool folded) {
    const std::vector<Regs> pairs = stream.fragments(chunk, stream.factors(chunk, folded), 0, folded);
    for (int i = 0; i < per_warp; ++i)
      for (int h = 0; h < 2; ++h) {
        Reg row = ((first_tile + imm(i)) << 4u) + q + imm(8 * h);
        Reg at_row = tile + row * imm(kRowBytes);
        const Regs& p = pairs[static_cast<std::size_t>(2 * i + h)];
        for (std::uint32_t half = 0; half < 2; ++half) {
          Reg piece = ((u << 1u) + half) ^ (row & 7u);
          k.st(Space::shared, b32, at(at_row + (piece << 4u)), Regs(p.begin() + 4 * half, p.begin() + 4 * half + 4));
        }
      }
  };
  k.if_else(stream.foldable(chunk), [&] { run(true); }, [&] { run(false); });
}

}  // namespace warpforge::ops
