// The build of a ptxas, as the last line of `ptxas --version` names it
// ("Build cuda_13.0.r13.0/compiler.36424714_0"): the machine code and the
// verdicts recorded for the tests (tests/corpus/ptx/machine-code.txt,
// tests/ops/ptxas_record.txt) hold for that build only.
#pragma once

#include <sstream>
#include <string>

#include "warpforge/ptx/cuda_toolkit.hpp"

namespace warpforge::testing {

inline std::string ptxas_version(const std::string& ptxas) {
  std::istringstream lines(ptx::run_tool(ptxas, {"--version"}).output);
  std::string last;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) last = line;
  return last;
}

}  // namespace warpforge::testing
