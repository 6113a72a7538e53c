// The "128×4 tiled" layout of block scale factors used by block-scaled GEMM
// (cuDNN frontend GemmAmax; the same as CUTLASS's Sm1xxBlockScaledConfig and
// cuBLAS's CUBLASLT_MATMUL_MATRIX_SCALE_VEC32/VEC16 block layouts).
//
// A matrix of `rows` × K with one scale per `vec` consecutive K elements has
// kb = ceil(K / vec) scale columns. Rows are padded to RM·128 and scale columns
// to RK·4 (RM = ceil(rows/128), RK = ceil(kb/4)); each 128×4 block of scales is
// 512 contiguous bytes, the 128 rows interleaved as (row % 32)·16 + (row/32 % 4)·4:
//
//   offset(r, kb, l) = l·RM·RK·512 + (r/128)·RK·512 + (kb/4)·512
//                      + (r%32)·16 + ((r/32)%4)·4 + kb%4
//
// As a 6-D tensor this is shape (32, 4, RM, 4, RK, L) with element strides
// (16, 4, RK·512, 1, 512, RM·RK·512). Padding entries hold 0.
#pragma once

#include <cstdint>
#include <vector>

namespace warpforge::ops {

struct ScaleFactorLayout {
  std::int64_t rows = 0;     // M for SFA, N for SFB
  std::int64_t k = 0;        // the K of the data (elements)
  std::int64_t batches = 1;  // L
  int vec = 32;              // elements per scale: 16 or 32

  std::int64_t k_blocks() const { return (k + vec - 1) / vec; }  // scale columns
  std::int64_t row_tiles() const { return (rows + 127) / 128; }  // RM
  std::int64_t k_tiles() const { return (k_blocks() + 3) / 4; }  // RK
  std::int64_t batch_bytes() const { return row_tiles() * k_tiles() * 512; }
  std::int64_t bytes() const { return batch_bytes() * batches; }  // padded size
  std::vector<std::int64_t> shape6() const;                       // (32, 4, RM, 4, RK, L)
  std::vector<std::int64_t> strides6() const;  // (16, 4, RK·512, 1, 512, RM·RK·512)

  // The byte offset of the scale of (row, k-block, batch); throws OpsError
  // outside the padded extents.
  std::int64_t offset(std::int64_t row, std::int64_t k_block, std::int64_t batch) const;

  struct Coordinate {
    std::int64_t row, k_block, batch;
    bool padding;  // row >= rows or k_block >= k_blocks()
  };
  // The inverse: which (row, k-block, batch) a byte offset holds.
  Coordinate coordinate(std::int64_t offset) const;
};

}  // namespace warpforge::ops
