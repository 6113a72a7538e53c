#include "sm90a_grouped_weights.hpp"

#include <utility>
#include <vector>


namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {
constexpr std::uint32_t kLoadBytes = 16;  // a packed load

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

}  // namespace warpforge::ops
