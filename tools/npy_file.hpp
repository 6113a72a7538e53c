// Writing NumPy .npy files (format version 1.0): for commands that save their
// inputs and outputs (`warpforge gemm-amax --save DIR`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace warpforge::cli {

// Writes `bytes` bytes at `data` as an array of the NumPy dtype `descr`
// ("<f4", "|u1", ...) and `shape`, C order. Throws warpforge::Error when the
// file cannot be written or bytes is not the shape's size in that dtype.
void write_npy(const std::filesystem::path& path, std::string_view descr,
               const std::vector<std::int64_t>& shape, const void* data, std::size_t bytes);

}  // namespace warpforge::cli
