// PTX -> warpforge C++: the source of a program that rebuilds a module with
// the DSL. Compiled and run, `build_<name>()` returns a module == the one
// given (structural equality, ptx::Module::operator==).
//
// The generated code declares registers and labels exactly as the PTX did
// (Kernel::declare_regs, label_named), uses typed wrappers where a sandbox run
// shows they emit the very instruction, `k.inst(...)` otherwise, folds exactly
// repetitive runs into `for` loops, and writes what the DSL has no call for
// (module variables, debug sections, parameters, prototypes) as IR values.
#pragma once

#include <string>

#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::transpiler {

struct TranspileOptions {
  std::string name = "module";  // the function is build_<name>; must be a C++ identifier
  bool with_main = false;       // also a main() that prints the module's PTX
  std::string source = "";      // where the PTX came from, for the header comment
};

std::string transpile(const ptx::Module& module, const TranspileOptions& options = {});

// The DSL target a module's kernels are built for: the module's own target
// where warpforge has it, else the nearest one below it (the DSL target only
// decides which wrappers are allowed; the module header is copied as given).
ptx::Target dsl_target(const ptx::Module& module);

}  // namespace warpforge::transpiler
