// Fuzz target for parse -> verify -> transpile, the path of `warpforge
// transpile`: any input must parse or throw ParseError; what parses and
// verifies must transpile to C++ naming its build function, or be refused
// with a warpforge::Error (never crash or throw anything else).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "transpiler/transpile.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/ptx/verifier.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warpforge;
  ptx::Module module;
  try {
    module = ptx::parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const ParseError&) {
    return 0;
  }
  if (!ptx::verify(module).empty()) return 0;  // what `transpile` refuses
  try {
    const std::string source = transpiler::transpile(module, {.name = "fuzzed"});
    if (source.find("build_fuzzed()") == std::string::npos) __builtin_trap();
  } catch (const Error&) {
    // A module the transpiler cannot express is refused with a reason.
  }
  return 0;
}
