// Reads the sections of a cubin (an ELF64 file) so that round-trip tests can
// compare two assemblies section by section; there is no cuobjdump on the CI
// machine.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace warpforge::testing {

struct Symbol {
  std::string name;
  std::vector<std::uint8_t>
      fields;  // the .symtab entry after st_name: info, other, section, value, size
  friend bool operator==(const Symbol&, const Symbol&) = default;
};

struct Cubin {
  std::map<std::string, std::vector<std::uint8_t>> sections;  // name -> contents (empty for NOBITS)
  std::vector<Symbol> symbols;                                // in .symtab order
};

// Throws std::runtime_error when the bytes are not a little-endian ELF64 file.
Cubin read_cubin(const std::vector<std::uint8_t>& bytes);

}  // namespace warpforge::testing
