#include "warpforge/runtime/host_memory.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace warpforge::runtime {

std::size_t host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                               : 0;
}

std::string describe_bytes(std::size_t bytes) {
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return std::to_string(bytes) + " bytes (" + gib + ")";
}

}  // namespace warpforge::runtime
