// How much memory the host can still give: the simulator's device memory is
// host memory, and commands that stage operands on the host check it before
// allocating.
#pragma once

#include <cstddef>
#include <string>

namespace warpforge::runtime {

// The kernel's estimate of memory available without swapping (MemAvailable
// in /proc/meminfo), else free physical pages.
std::size_t host_available_bytes();

// "1073741824 bytes (1.0 GiB)", "524288 bytes (512.0 KiB)", "100 bytes": sizes
// in refusals.
std::string describe_bytes(std::size_t bytes);

}  // namespace warpforge::runtime
