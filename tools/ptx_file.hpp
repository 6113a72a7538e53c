// Reading a PTX file for the commands that take one (check, fmt, transpile).
#pragma once

#include <cstddef>
#include <string>

namespace warpforge::cli {

// The largest PTX file read: ten times the biggest module the project's
// corpus and kernels produce, and small enough to parse in seconds.
constexpr std::size_t kMaxPtxFileBytes = std::size_t{256} << 20;

// The text of the regular file `path`. Anything else (a directory, a FIFO, a
// device such as /dev/zero) or a file over kMaxPtxFileBytes is refused
// before a byte is read, so no input can make the reader wait or fill memory.
std::string read_ptx_file(const std::string& path);

}  // namespace warpforge::cli
