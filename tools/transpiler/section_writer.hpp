// A module's data sections (.section .debug_info { ... } of -G and Triton
// builds) as C++: runs of integer lines of one type and width, and runs of
// label addresses, become rows of a static table that add_lines() appends
// (`{ptx::Type::b8, {1, 17, 1, ...}}`); the rest is one push_back per line.
// One statement per line of a section of tens of thousands of lines took GCC
// many minutes; one call per run, seconds; a static table is data, which it
// compiles in milliseconds.
#pragma once

#include <string>

#include "warpforge/ptx/module.hpp"

namespace warpforge::transpiler {

struct SectionSource {
  std::string text;              // the C++ function definition
  bool uses_data_lines = false;  // whether it uses the generated file's DataRun and add_lines()
};

SectionSource write_section(const ptx::Section& section, const std::string& cpp_name);

// The helpers' definitions, written once into a file that uses them.
extern const char* const kDataLinesHelper;

}  // namespace warpforge::transpiler
