// C++ spellings for the generated source: identifiers made from PTX names, and
// string literals.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace warpforge::transpiler {

// Hands out C++ identifiers for PTX names within one generated function:
// `%rd` -> `rd`, `$L__BB0_2` -> `L_BB0_2`; names that would clash with a C++
// keyword, a name the generated code uses (k, fn, i, the DSL's type names) or
// one already handed out get a numeric suffix.
class CppNames {
 public:
  std::string claim(std::string_view ptx_name, std::string_view fallback = "v");

 private:
  std::set<std::string> used_;
};

// "text" with C++ escapes.
std::string cpp_string(std::string_view text);

}  // namespace warpforge::transpiler
