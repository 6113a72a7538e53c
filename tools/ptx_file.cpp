#include "ptx_file.hpp"

#include <iostream>

#include "command_files.hpp"

namespace warpforge::cli {

std::string read_ptx_file(const std::string& path) {
  return read_regular_file(path, kMaxPtxFileBytes, "PTX files");
}

int report_problems(const std::string& command, const std::string& path,
                    const std::vector<std::string>& problems) {
  for (const auto& p : problems) std::cerr << "warpforge " << command << ": " << path << ": " << p << "\n";
  return problems.empty() ? 0 : 1;
}

}  // namespace warpforge::cli
