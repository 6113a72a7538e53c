#include "warpforge/ops/scale_factor_layout.hpp"

#include <string>

#include "warpforge/error.hpp"

namespace warpforge::ops {

std::vector<std::int64_t> ScaleFactorLayout::shape6() const {
  return {32, 4, row_tiles(), 4, k_tiles(), batches};
}

std::vector<std::int64_t> ScaleFactorLayout::strides6() const {
  return {16, 4, k_tiles() * 512, 1, 512, batch_bytes()};
}

std::int64_t ScaleFactorLayout::offset(std::int64_t row, std::int64_t k_block,
                                       std::int64_t batch) const {
  if (row < 0 || row >= row_tiles() * 128 || k_block < 0 || k_block >= k_tiles() * 4 || batch < 0 ||
      batch >= batches)
    throw OpsError("scale-factor coordinate (row " + std::to_string(row) + ", k-block " +
                   std::to_string(k_block) + ", batch " + std::to_string(batch) +
                   ") refused: the padded layout holds rows 0.." +
                   std::to_string(row_tiles() * 128 - 1) + ", k-blocks 0.." +
                   std::to_string(k_tiles() * 4 - 1) + ", batches 0.." +
                   std::to_string(batches - 1));
  return batch * batch_bytes() + (row / 128) * k_tiles() * 512 + (k_block / 4) * 512 +
         (row % 32) * 16 + ((row / 32) % 4) * 4 + k_block % 4;
}

ScaleFactorLayout::Coordinate ScaleFactorLayout::coordinate(std::int64_t offset) const {
  if (offset < 0 || offset >= bytes())
    throw OpsError("scale-factor offset " + std::to_string(offset) +
                   " refused: the layout spans bytes 0.." + std::to_string(bytes() - 1));
  const std::int64_t batch = offset / batch_bytes();
  const std::int64_t in_batch = offset % batch_bytes();
  const std::int64_t tile = in_batch / 512, in_tile = in_batch % 512;
  const std::int64_t row = (tile / k_tiles()) * 128 + ((in_tile / 4) % 4) * 32 + in_tile / 16;
  const std::int64_t k_block = (tile % k_tiles()) * 4 + in_tile % 4;
  return {row, k_block, batch, row >= rows || k_block >= k_blocks()};
}

}  // namespace warpforge::ops
