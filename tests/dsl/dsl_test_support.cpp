#include "dsl/dsl_test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace warpforge::dsl::testing_support {

std::string ptxas_missing_reason() {
  if (ptx::find_ptxas()) return {};
  return "ptxas not found (set WARPFORGE_PTXAS, or put the CUDA toolkit's bin on PATH); "
         "the wrappers cannot be checked against the assembler here";
}

namespace {
std::string numbered(const std::string& text) {
  std::istringstream in(text);
  std::ostringstream out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) out << n << ": " << line << '\n';
  return out.str();
}
}  // namespace

::testing::AssertionResult assembles(const ptx::Module& module) {
  std::string text = module.to_ptx();
  ptx::PtxasResult r = ptx::run_ptxas(text, module.target.at(0));
  if (r.ok && !r.cubin.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "ptxas -arch=" << module.target.at(0) << " refused it:\n"
                                       << r.log << "\n"
                                       << numbered(text);
}

::testing::AssertionResult matches_golden(const std::string& file, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path path = fs::path(WARPFORGE_SOURCE_DIR) / "tests" / "dsl" / "golden" / file;
  const char* update = std::getenv("WARPFORGE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << text;
    return ::testing::AssertionSuccess() << "rewrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return ::testing::AssertionFailure()
           << "no golden file " << path << "; run with WARPFORGE_UPDATE_GOLDEN=1 to create it";
  std::string expected((std::istreambuf_iterator<char>(in)), {});
  if (expected == text) return ::testing::AssertionSuccess();
  // Point at the first differing line, then show both texts.
  std::istringstream a(expected), b(text);
  std::string la, lb;
  int line = 1;
  while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
  return ::testing::AssertionFailure()
         << path << " differs from the emitted PTX at line " << line
         << " (WARPFORGE_UPDATE_GOLDEN=1 rewrites it after review)\n--- golden\n"
         << expected << "\n--- emitted\n"
         << text;
}

}  // namespace warpforge::dsl::testing_support
