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
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB"};
  int unit = -1;
  double scaled = static_cast<double>(bytes);
  while (unit < 2 && scaled >= 1024) {
    scaled /= 1024;
    ++unit;
  }
  if (unit < 0) return std::to_string(bytes) + " bytes";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", scaled, kUnits[unit]);
  return std::to_string(bytes) + " bytes (" + text + ")";
}

}  // namespace warpforge::runtime
