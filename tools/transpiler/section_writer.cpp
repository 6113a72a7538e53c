#include "transpiler/section_writer.hpp"

#include <optional>
#include <utility>
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
    "// A run of section lines of one type: integers as the PTX spelled them in decimal,\n"
    "// `per_line` a line, or symbols (label addresses), one a line.\n"
    "struct DataRun {\n"
    "  ptx::Type type;\n"
    "  std::initializer_list<std::int64_t> values = {};\n"
    "  std::size_t per_line = 1;\n"
    "  std::initializer_list<const char*> symbols = {};\n"
    "};\n"
    "// Appends the lines of `runs` to `s`, in order.\n"
    "void add_lines(ptx::Section& s, std::span<const DataRun> runs) {\n"
    "  for (const DataRun& run : runs) {\n"
    "    for (auto v = run.values.begin(); v != run.values.end();) {\n"
    "      ptx::Section::Line line{.type = run.type};\n"
    "      for (std::size_t i = 0; i < run.per_line; ++i, ++v)\n"
    "        line.values.push_back(ptx::Operand::imm_text(ptx::Operand::Kind::imm_int, "
    "std::to_string(*v)));\n"
    "      s.lines.push_back(std::move(line));\n"
    "    }\n"
    "    for (const char* name : run.symbols) s.lines.push_back({.type = run.type, .values = "
    "{ptx::Operand::symbol(name)}});\n"
    "  }\n"
    "}\n";

namespace {

// The run of lines from `first` that one table row rebuilds exactly: lines of
// one type whose values are all decimal integers, as many on each line, or
// one label address each. Returns its end (`first` where there is none) and
// the row's C++.
std::pair<std::size_t, std::string> run_row(const std::vector<ptx::Section::Line>& lines,
                                            std::size_t first) {
  // Values per source line of a row.
  constexpr std::size_t kPerRow = 16;
  const bool symbols = !spelled(lines[first], decimal_literal).has_value();
  const Spelling spell = symbols ? Spelling(symbol) : Spelling(decimal_literal);
  auto first_values = spelled(lines[first], spell);
  if (!first_values || (symbols && first_values->size() != 1)) return {first, ""};
  std::size_t end = first;
  std::string values;
  std::size_t written = 0;
  for (; end < lines.size() && lines[end].type == lines[first].type; ++end) {
    auto line = spelled(lines[end], spell);
    if (!line || line->size() != first_values->size()) break;
    for (const auto& v : *line) {
      values += (written == 0 ? "" : written % kPerRow == 0 ? ",\n          " : ", ") + v;
      ++written;
    }
  }
  const std::string type = literal(lines[first].type);
  if (symbols) return {end, "{.type = " + type + ", .symbols = {" + values + "}}"};
  const std::size_t per_line = first_values->size();
  return {end, "{" + type + ", {" + values + "}" +
                   (per_line > 1 ? ", " + std::to_string(per_line) : "") + "}"};
}

}  // namespace

SectionSource write_section(const ptx::Section& section, const std::string& cpp_name) {
  SectionSource out;
  out.text = "\nptx::Section " + cpp_name +
             "() {\n  ptx::Section s{.name = " + cpp_string(section.name) + "};\n";
  const auto& lines = section.lines;
  int tables = 0;
  for (std::size_t i = 0; i < lines.size();) {
    auto run = run_row(lines, i);
    if (run.first == i) {
      out.text += "  s.lines.push_back(" + literal(lines[i]) + ");\n";
      ++i;
      continue;
    }
    // Consecutive runs share one table; a line no row spells starts a new one.
    const std::string table = "lines_" + std::to_string(tables++);
    out.text += "  static constexpr DataRun " + table + "[] = {\n";
    while (run.first != i) {
      out.text += "      " + run.second + ",\n";
      i = run.first;
      if (i == lines.size()) break;
      run = run_row(lines, i);
    }
    out.text += "  };\n  add_lines(s, " + table + ");\n";
    out.uses_data_lines = true;
  }
  out.text += "  return s;\n}\n";
  return out;
}

}  // namespace warpforge::transpiler
