// NumPy .npy files, format version 1.0 (numpy.lib.format): the magic
// "\x93NUMPY", version 1.0, a little-endian u16 header length, then an
// ASCII dict {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded
// with spaces and ended by '\n' so that the data starts on a multiple of 64
// bytes, then the elements in C (or Fortran) order.
//
// warpforge writes f32 as '<f4', f16 as '<f2' and bf16 — which NumPy lacks —
// as its raw bits, '<u2' (view them with ml_dtypes.bfloat16, or shift left 16
// into a '<u4' and view as '<f4').
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/ops/gemm_reference.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::cli {

// The folder a --save flag names, made ready before the command computes
// anything (so that nothing is computed for nothing): created with its
// parents when absent, and refused, saying why, when the name is empty,
// something other than a directory is there, or no file can be written in it.
void prepare_save_directory(const std::string& flag, const std::filesystem::path& dir);

// '<f4', '<f2', '<u2' for f32, f16, bf16; throws Error for other dtypes.
std::string npy_descr(runtime::DType dtype);

// The header (magic through the '\n'), for `shape` and the given order.
std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape,
                       bool fortran_order);

// Writes `tensor` (a host copy of a strided tensor) to `path`: C order, or
// Fortran order when it is a column-major (rank-2) array, compacting any
// padding away. Throws Error when the file cannot be written.
void write_npy(const std::filesystem::path& path, const ops::HostTensor& tensor);

// Writes `bytes` bytes at `data` as a C-order array of the NumPy dtype `descr`
// ("<f4", "|u1", ...) and `shape` (raw low-precision data, scale factors).
// Throws Error when `bytes` is not the shape's size in that dtype or the file
// cannot be written.
void write_npy(const std::filesystem::path& path, std::string_view descr,
               const std::vector<std::int64_t>& shape, const void* data, std::size_t bytes);

}  // namespace warpforge::cli
