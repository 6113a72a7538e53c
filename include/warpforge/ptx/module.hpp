// A PTX module: the header directives and the module-scope items (variables,
// functions, directives such as .file and debug sections) in source order.
// This is warpforge's one intermediate representation: the DSL and the parser
// produce it; the emitter, the simulator and the transpiler consume it.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "warpforge/ptx/function.hpp"

namespace warpforge::ptx {

// A `.section name { ... }` of DWARF data, kept so that debug builds
// round-trip. Its body lines are data directives (.b8/.b32/.b64 values) and
// labels.
struct Section {
  struct Line {
    std::optional<std::string> label;  // `name:` line when set, else data
    Type type = Type::b8;
    std::vector<Operand> values;
    friend bool operator==(const Line&, const Line&) = default;
  };
  std::string name;  // ".debug_info"
  std::vector<Line> lines;
  friend bool operator==(const Section&, const Section&) = default;
};

using ModuleItem = std::variant<Variable, Function, Directive, Section>;

struct Module {
  int version_major = 8;
  int version_minor = 0;
  std::vector<std::string> target;  // {"sm_90a"}, {"sm_80", "debug"}
  int address_size = 64;
  std::vector<ModuleItem> items;

  const Function* find_function(const std::string& name) const;
  Function* find_function(const std::string& name);
  std::vector<const Function*> entries() const;

  // The emitted PTX text (see emitter.hpp).
  std::string to_ptx() const;

  friend bool operator==(const Module&, const Module&) = default;
};

}  // namespace warpforge::ptx
