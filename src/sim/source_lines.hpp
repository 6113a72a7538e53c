// Where each instruction of a kernel came from in its source program, as
// the PTX's debug directives say (PTX ISA 11.5.1 ".file", 11.5.2 ".loc"):
// compilers that keep line information (Triton always, nvcc with -lineinfo
// or -G) put a `.loc file line column` before the instructions of each
// source position, and list the files with `.file index "name"`. The
// simulator's fault messages name that position ("kernel.py:12:20").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"

namespace warpforge::sim {

class SourceLines {
 public:
  // Reads the module's .file table.
  explicit SourceLines(const ptx::Module& module);

  // Follows a directive of the body in program order: a .loc moves the
  // current position (line 0, "no source line", clears it).
  void see(const ptx::Directive& directive);
  // The current position as an index into positions() (0: none).
  std::uint32_t current() const { return current_; }
  // "file:line:column" per index; index 0 is the empty string.
  std::vector<std::string> take_positions() { return std::move(positions_); }

 private:
  std::map<long long, std::string> files_;
  std::map<std::string, std::uint32_t> interned_;
  std::vector<std::string> positions_{std::string()};
  std::uint32_t current_ = 0;
};

}  // namespace warpforge::sim
