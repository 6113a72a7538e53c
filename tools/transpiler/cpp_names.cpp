#include "transpiler/cpp_names.hpp"

#include <array>
#include <cctype>
#include <cstdio>

namespace warpforge::transpiler {
namespace {

// C++ keywords, and the names the generated code itself refers to unqualified
// (the DSL's type constants and helpers, the kernel `k`, the function `fn`,
// loop counter `i`).
bool is_reserved(const std::string& s) {
  static const std::set<std::string> kReserved = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
      "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval",
      "constexpr", "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype",
      "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern",
      "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
      "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
      "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw",
      "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
      "volatile", "wchar_t", "while", "xor", "xor_eq", "main",
      // generated code
      "k", "fn", "i", "m", "slice", "at", "imm_f32", "imm_f64", "warpforge", "ptx", "dsl", "std",
      "Kernel", "Reg", "Regs", "Pred", "PredUse", "Src", "Addr", "Label", "Shared", "ParamRef", "SReg",
      "Type", "Target", "Space", "Cmp", "BraOpts",
      // dsl/types.hpp
      "pred", "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
      "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "e4m3", "e5m2", "e4m3x2", "e5m2x2"};
  return kReserved.count(s) > 0;
}

}  // namespace

std::string CppNames::claim(std::string_view ptx_name, std::string_view fallback) {
  // Letters, digits and single underscores; no leading underscore (names
  // starting with `_` + capital or holding `__` are reserved in C++).
  std::string s;
  for (char c : ptx_name) {
    bool word = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (word) s += c;
    else if (!s.empty() && s.back() != '_') s += '_';
  }
  while (!s.empty() && s.back() == '_') s.pop_back();
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = std::string(fallback) + "_" + s;
  if (s.back() == '_') s.pop_back();
  std::string name = s;
  for (int n = 2; is_reserved(name) || used_.count(name); ++n) name = s + "_" + std::to_string(n);
  used_.insert(name);
  return name;
}

std::string cpp_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f) {
          // Octal, so that a following hex digit cannot extend the escape.
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace warpforge::transpiler
