#include "transpiler/section_writer.hpp"

#include <optional>
#include <vector>

#include "transpiler/cpp_names.hpp"
#include "transpiler/ir_literal.hpp"

namespace warpforge::transpiler {
namespace {

// An operand data_symbols() rebuilds exactly: a label's address (.b64 $L__tmp0).
std::optional<std::string> symbol(const ptx::Operand& op) {
  if (literal(op) != literal(ptx::Operand::symbol(op.text))) return std::nullopt;
  return cpp_string(op.text);
}

using Spelling = std::optional<std::string> (*)(const ptx::Operand&);

// The line's values as `spell` writes them, where it writes every one.
std::optional<std::vector<std::string>> spelled(const ptx::Section::Line& line, Spelling spell) {
  if (line.label || line.values.empty()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& v : line.values) {
    auto s = spell(v);
    if (!s) return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

}  // namespace

const char* const kDataLinesHelper =
    "// Section lines of `per_line` values each, of type `type`: integers as the PTX spelled them "
    "in decimal.\n"
    "void data_lines(ptx::Section& s, ptx::Type type, std::initializer_list<std::int64_t> values, "
    "std::size_t per_line = 1) "
    "{\n"
    "  for (auto v = values.begin(); v != values.end();) {\n"
    "    ptx::Section::Line line{.type = type};\n"
    "    for (std::size_t i = 0; i < per_line; ++i, ++v)\n"
    "      line.values.push_back(ptx::Operand::imm_text(ptx::Operand::Kind::imm_int, "
    "std::to_string(*v)));\n"
    "    s.lines.push_back(std::move(line));\n"
    "  }\n"
    "}\n"
    "// Section lines of one symbol each (a label's address), of type `type`.\n"
    "void data_symbols(ptx::Section& s, ptx::Type type, std::initializer_list<const char*> names) "
    "{\n"
    "  for (const char* name : names) s.lines.push_back({.type = type, .values = "
    "{ptx::Operand::symbol(name)}});\n"
    "}\n";

SectionSource write_section(const ptx::Section& section, const std::string& cpp_name) {
  // Values per source line of a call, and lines per call at most.
  constexpr std::size_t kPerRow = 16, kPerCall = 256;
  SectionSource out;
  out.text = "\nptx::Section " + cpp_name +
             "() {\n  ptx::Section s{.name = " + cpp_string(section.name) + "};\n";
  const auto& lines = section.lines;
  for (std::size_t i = 0; i < lines.size();) {
    // A run of lines of one type and width whose values one helper spells.
    const bool symbols = !spelled(lines[i], decimal_literal).has_value();
    const Spelling spell = symbols ? Spelling(symbol) : Spelling(decimal_literal);
    auto first = spelled(lines[i], spell);
    std::size_t end = i;
    if (first && (!symbols || first->size() == 1))
      while (end < lines.size() && end - i < kPerCall && lines[end].type == lines[i].type) {
        auto values = spelled(lines[end], spell);
        if (!values || values->size() != first->size()) break;
        ++end;
      }
    if (end == i) {
      out.text += "  s.lines.push_back(" + literal(lines[i]) + ");\n";
      ++i;
      continue;
    }
    out.uses_data_lines = true;
    out.text += std::string("  ") + (symbols ? "data_symbols" : "data_lines") + "(s, " +
                literal(lines[i].type) + ", {";
    std::size_t written = 0;
    for (std::size_t j = i; j < end; ++j) {
      const std::vector<std::string> values = *spelled(lines[j], spell);
      for (const auto& v : values) {
        out.text += (written == 0 ? "\n      " : written % kPerRow == 0 ? ",\n      " : ", ") + v;
        ++written;
      }
    }
    out.text += first->size() > 1 ? "}, " + std::to_string(first->size()) + ");\n" : "});\n";
    i = end;
  }
  out.text += "  return s;\n}\n";
  return out;
}

}  // namespace warpforge::transpiler
