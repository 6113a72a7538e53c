// The inlined calls a PTX module's DWARF debug information lists: each
// DW_TAG_inlined_subroutine of .debug_info (DWARF 4 section 3.3.8.2), with
// the labels that bound its code (DW_AT_low_pc, DW_AT_high_pc, addresses:
// in PTX, labels of the function body; empty where the DIE gives its code
// otherwise, as DW_AT_ranges) and the position of the call
// (DW_AT_call_file, _line, _column).
//
// Why: a `.loc` of code inlined from a called function names that
// function's line. Newer LLVM adds the call's position to the directive
// (`.loc 2 293 36, function_name ..., inlined_at 1 21 67`, which
// SourceLines reads); the LLVM of Triton 3.6 writes only `.loc 2 293 36`,
// and the call's position is then only in .debug_info. Without it a fault
// in tl.sum's body would name triton/language/standard.py, not the user's
// kernel.
//
// Only what LLVM's NVPTX back end writes is read: DWARF 2 to 5 compile
// units, contiguous ranges (low_pc and high_pc both labels), the forms
// below. A section this reader cannot follow gives no calls (the faults then
// name the .loc alone), never an error: debug information is optional.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "warpforge/ptx/module.hpp"

namespace warpforge::sim {

struct InlinedCall {
  std::string low_label, high_label;       // the code is from low_label up to high_label
  std::tuple<long long, long long, long long> call;  // file, line, column of the call
  int depth = 0;                           // 1: called from a subprogram; 2: from a depth-1 call ...
  int parent = -1;                         // the enclosing call's index, or -1
};

// The module's inlined calls, outermost before the calls they contain.
std::vector<InlinedCall> inlined_calls(const ptx::Module& module);

}  // namespace warpforge::sim
