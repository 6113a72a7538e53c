// The registers, labels and parameters a generated function has handles for,
// and the C++ expressions that name them: `r[5]`, `!p[1]`, `L_BB0_2`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "transpiler/code.hpp"
#include "transpiler/cpp_names.hpp"
#include "warpforge/ptx/types.hpp"

namespace warpforge::transpiler {

// A register handle the generated code holds.
struct RegHandle {
  Code expr;           // `r[5]` (index as a hole) or `acc`
  ptx::Type declared;  // the type it was declared with; pred for predicates
};

class Scope {
 public:
  // One PTX block: registers declared inside it are visible until it closes.
  void open() { frames_.emplace_back(); }
  void close() { frames_.pop_back(); }

  // `.reg .T prefix<count>` held in C++ as `cpp_name`, and `.reg .T name`.
  void add_range(const std::string& prefix, int count, ptx::Type type, const std::string& cpp_name);
  void add_scalar(const std::string& name, ptx::Type type, const std::string& cpp_name);
  std::optional<RegHandle> find(const std::string& ptx_name) const;

  CppNames names;
  std::map<std::string, std::string> labels;  // PTX label -> C++ Label handle
  std::map<std::string, std::string> params;  // parameter symbol -> C++ ParamRef handle

 private:
  struct Range {
    std::string prefix;
    int count;
    ptx::Type type;
    std::string cpp;
  };
  struct Frame {
    std::vector<Range> ranges;
    std::map<std::string, RegHandle> scalars;
  };
  std::vector<Frame> frames_{1};
};

}  // namespace warpforge::transpiler
