// NumPy .npy files, format version 1.0 (numpy.lib.format): the magic
// "\x93NUMPY", version 1.0, a little-endian u16 header length, then an ASCII
// dict {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with
// spaces and ended by '\n' so that the data starts on a multiple of 64 bytes,
// then the elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace warpforge::cli {

// The header (magic through the '\n'), for `shape` and the given order.
std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape,
                       bool fortran_order);

// Writes `bytes` bytes at `data` as a C-order array of the NumPy dtype `descr`
// ("<f4", "|u1", ...) and `shape`. Throws warpforge::Error when `bytes` is not
// the shape's size in that dtype or the file cannot be written.
void write_npy(const std::filesystem::path& path, std::string_view descr,
               const std::vector<std::int64_t>& shape, const void* data, std::size_t bytes);

}  // namespace warpforge::cli
