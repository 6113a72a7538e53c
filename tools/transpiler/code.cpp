#include "transpiler/code.hpp"

#include <cstddef>

namespace warpforge::transpiler {
namespace {

// Holes of group `g` must equal base + g * step.
struct Progression {
  std::vector<std::int64_t> base, step;
};

std::string render_with(const std::string& text, const std::vector<std::int64_t>& base,
                        const std::vector<std::int64_t>& step) {
  std::string out;
  std::size_t hole = 0;
  for (char c : text) {
    if (c != Code::kHole) {
      out += c;
      continue;
    }
    std::int64_t a = base[hole], d = step[hole];
    ++hole;
    if (d == 0) {
      out += std::to_string(a);
      continue;
    }
    std::string term = (d == 1 || d == -1) ? "i" : std::to_string(d < 0 ? -d : d) + " * i";
    if (a == 0) out += (d < 0 ? "-" : "") + term;
    else out += std::to_string(a) + (d < 0 ? " - " : " + ") + term;
  }
  return out;
}

// How many groups of `period` statements from `start` repeat with holes in
// arithmetic progression (at least 1: the first group itself).
std::size_t repeats(const std::vector<Code>& s, std::size_t start, std::size_t period) {
  if (start + 2 * period > s.size()) return 1;
  std::vector<std::int64_t> step;
  for (std::size_t j = 0; j < period; ++j) {
    const Code &a = s[start + j], &b = s[start + period + j];
    if (a.text != b.text) return 1;
    for (std::size_t h = 0; h < a.values.size(); ++h) step.push_back(b.values[h] - a.values[h]);
  }
  std::size_t n = 2;
  for (; start + (n + 1) * period <= s.size(); ++n) {
    std::size_t k = 0;
    for (std::size_t j = 0; j < period; ++j) {
      const Code &a = s[start + j], &c = s[start + n * period + j];
      if (a.text != c.text) return n;
      for (std::size_t h = 0; h < a.values.size(); ++h, ++k)
        if (c.values[h] != a.values[h] + static_cast<std::int64_t>(n) * step[k]) return n;
    }
  }
  return n;
}

}  // namespace

Code& Code::operator+=(const Code& o) {
  text += o.text;
  values.insert(values.end(), o.values.begin(), o.values.end());
  return *this;
}

std::string Code::render() const { return render_with(text, values, std::vector<std::int64_t>(values.size(), 0)); }

Code join(const std::vector<Code>& parts, const std::string& separator) {
  Code out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += Code(separator);
    out += parts[i];
  }
  return out;
}

void write_folded(const std::vector<Code>& statements, const std::string& indent, std::string& out) {
  // Groups of up to this many statements are looked for; longer periods are
  // rare in compiler output and make the search quadratic in practice.
  constexpr std::size_t kMaxPeriod = 8;
  // Below three repetitions a loop reads worse than the statements.
  constexpr std::size_t kMinRepeats = 3;
  std::size_t at = 0;
  while (at < statements.size()) {
    std::size_t best_period = 0, best_n = 1;
    for (std::size_t p = 1; p <= kMaxPeriod && at + p <= statements.size(); ++p) {
      std::size_t n = repeats(statements, at, p);
      if (n >= kMinRepeats && n * p > best_n * best_period) best_period = p, best_n = n;
    }
    if (best_period == 0) {
      out += indent + statements[at].render() + "\n";
      ++at;
      continue;
    }
    out += indent + "for (int i = 0; i < " + std::to_string(best_n) + "; ++i) {\n";
    for (std::size_t j = 0; j < best_period; ++j) {
      const Code &a = statements[at + j], &b = statements[at + best_period + j];
      std::vector<std::int64_t> step;
      for (std::size_t h = 0; h < a.values.size(); ++h) step.push_back(b.values[h] - a.values[h]);
      out += indent + "  " + render_with(a.text, a.values, step) + "\n";
    }
    out += indent + "}\n";
    at += best_n * best_period;
  }
}

}  // namespace warpforge::transpiler
