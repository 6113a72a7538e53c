// A module's data sections (.section .debug_info { ... } of -G and Triton
// builds) as C++: runs of one-integer lines of one width become one
// data_lines(s, b8, {1, 17, 1, ...}) call, the rest one push_back per line.
// One statement per line of a section of tens of thousands of lines took GCC
// many minutes; a braced list of integers takes it milliseconds.
#pragma once

#include <string>

#include "warpforge/ptx/module.hpp"

namespace warpforge::transpiler {

struct SectionSource {
  std::string text;              // the C++ function definition
  bool uses_data_lines = false;  // whether it calls the generated file's data_lines() helper
};

SectionSource write_section(const ptx::Section& section, const std::string& cpp_name);

// The helper's definition, written once into a file that uses it.
extern const char* const kDataLinesHelper;

}  // namespace warpforge::transpiler
