// An .entry (kernel) or .func (device function) with its parameters,
// performance directives (PTX ISA 11.4) and body.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "warpforge/ptx/statement.hpp"

namespace warpforge::ptx {

struct Function {
  bool is_entry = true;
  Linkage linkage = Linkage::visible;
  std::string name;
  std::vector<Variable> returns;  // .func only
  std::vector<Variable> params;
  std::vector<Directive> directives;  // .maxntid, .reqntid, .minnctapersm, .maxnreg,
                                      // .explicitcluster, .reqnctapercluster, .noreturn ...
  std::optional<Block> body;          // nullopt for a prototype (declaration only)

  const Variable* find_param(const std::string& param_name) const;

  friend bool operator==(const Function&, const Function&) = default;
};

}  // namespace warpforge::ptx
