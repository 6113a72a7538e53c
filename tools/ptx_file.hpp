// Reading a PTX file for the commands that take one (check, fmt, transpile).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace warpforge::cli {

// The largest PTX file read: ten times the biggest module the project's
// corpus and kernels produce, and small enough to parse in seconds.
constexpr std::size_t kMaxPtxFileBytes = std::size_t{256} << 20;

// The text of the regular file `path`, at most kMaxPtxFileBytes
// (read_regular_file, command_files.hpp).
std::string read_ptx_file(const std::string& path);

// ptx::verify's problems with the module read from `path`, one line each on
// stderr ("warpforge <command>: <path>: <problem>"); returns the exit status,
// 1 when there are any.
int report_problems(const std::string& command, const std::string& path,
                    const std::vector<std::string>& problems);

}  // namespace warpforge::cli
