// Fuzz target for the PTX parser (libFuzzer's entry point; tests/fuzz/fuzz.cmake
// builds it with the standalone driver, scripts/fuzz.sh with libFuzzer). Any
// input must either parse or throw ParseError; what parses must verify
// without crashing and emit PTX that parses back to the same IR.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/ptx/verifier.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warpforge::ptx;
  Module module;
  try {
    module = parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const warpforge::ParseError&) {
    return 0;
  }
  verify(module);
  if (!(parse(emit(module), "emitted") == module)) __builtin_trap();
  return 0;
}
