// Where each instruction of a kernel came from in its source program, as
// the PTX's debug directives say (PTX ISA 11.5.1 ".file", 11.5.2 ".loc"):
// compilers that keep line information (Triton always, nvcc with -lineinfo
// or -G) put a `.loc file line column` before the instructions of each
// source position, and list the files with `.file index "name"`. Code
// inlined from a called function names the call's position too (`.loc 2 287
// 12, function_name $L__info_string0, inlined_at 1 6 23`), the call's own
// position possibly inlined in turn. Older LLVM (Triton 3.6's) writes the
// call's position only in the DWARF .debug_info (inlined_calls.hpp), as a
// range of labels of the body. The simulator's fault messages name the
// outermost position, the line of the kernel the programmer wrote, and the
// innermost one after it: "kernel.py:6:23 (inlined: standard.py:287:12)".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "inlined_calls.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::sim {

class SourceLines {
 public:
  // Reads the module's .file table.
  explicit SourceLines(const ptx::Module& module);

  // Follows a directive of the body in program order: a .loc moves the
  // current position (line 0, "no source line", clears it).
  void see(const ptx::Directive& directive);
  // Follows a label of the body in program order: the inlined calls of the
  // debug information that end or start there.
  void see_label(const std::string& label);
  // The current position as an index into the positions (0: none).
  std::uint32_t current() const { return current_; }
  // "file:line:column", with the inlined position where there is one, per
  // index; index 0 is the empty string. Calls after the last see().
  std::vector<std::string> take_positions() const;

 private:
  using Position = std::tuple<long long, long long, long long>;  // file, line, column
  using Located = std::pair<Position, int>;  // a .loc's position, the innermost open inlined call (-1: none)
  std::string describe(const Position& p) const;
  Position outermost(const Located& at) const;
  void update();  // current_ from the .loc in effect and the open calls

  std::map<long long, std::string> files_;
  std::map<Position, Position> callers_;  // an inlined position -> the call's position
  std::vector<InlinedCall> calls_;
  std::vector<int> open_;  // calls_ whose range the body is in
  std::map<Located, std::uint32_t> interned_;
  std::vector<Located> positions_{Located{}};
  Position loc_{};  // line 0: none
  std::uint32_t current_ = 0;
};

}  // namespace warpforge::sim
