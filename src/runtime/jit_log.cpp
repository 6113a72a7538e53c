#include "warpforge/runtime/jit_log.hpp"

#include <charconv>
#include <vector>

namespace warpforge::runtime {
namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The N of the first ", line N" in a log line, or 0.
std::size_t line_number(std::string_view log_line) {
  const std::size_t at = log_line.find(", line ");
  if (at == std::string_view::npos) return 0;
  std::string_view digits = log_line.substr(at + 7);
  std::size_t n = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return error == std::errc() ? n : 0;
}

}  // namespace

std::string explain_jit_log(std::string_view log, std::string_view ptx) {
  const auto source = split_lines(ptx);
  std::string out;
  for (std::string_view line : split_lines(log)) {
    if (line.empty()) continue;
    out.append(line).append("\n");
    const std::size_t n = line_number(line);
    if (n >= 1 && n <= source.size()) {
      std::string_view quoted = source[n - 1];
      while (!quoted.empty() && (quoted.front() == '\t' || quoted.front() == ' ')) quoted.remove_prefix(1);
      out.append("    ").append(std::to_string(n)).append(" | ").append(quoted).append("\n");
    }
  }
  if (out.empty()) out = "(the JIT wrote no log)\n";
  return out;
}

}  // namespace warpforge::runtime
