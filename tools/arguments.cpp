#include "arguments.hpp"

#include <charconv>
#include <cmath>

#include "warpforge/error.hpp"

namespace warpforge::cli {

Arguments::Arguments(std::string command, std::vector<std::string> args)
    : command_(std::move(command)), args_(std::move(args)), taken_(args_.size(), false) {}

namespace {

std::string see_help(const std::string& command) {
  return "see `warpforge " + command + " --help`";
}

}  // namespace

bool Arguments::flag(const std::string& name) {
  bool found = false;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (taken_[i] || args_[i] != name) continue;
    if (found) throw Error(name + " given twice; give it once");
    found = taken_[i] = true;
  }
  return found;
}

std::optional<std::string> Arguments::value(const std::string& name) {
  std::optional<std::string> found;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (taken_[i] || args_[i] != name) continue;
    if (i + 1 >= args_.size()) throw Error(name + " needs a value; " + see_help(command_));
    if (found)
      throw Error(name + " given twice ('" + *found + "' and '" + args_[i + 1] +
                  "'); give it once");
    taken_[i] = taken_[i + 1] = true;
    found = args_[i + 1];
    ++i;
  }
  return found;
}

std::vector<std::string> Arguments::positionals(std::size_t min, std::size_t max,
                                                const std::string& what) {
  std::vector<std::string> found;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (taken_[i] || (!args_[i].empty() && args_[i][0] == '-')) continue;
    if (found.size() == max)
      throw Error("unexpected argument '" + args_[i] + "' after " + what + " '" + found.back() +
                  "'; " + see_help(command_));
    taken_[i] = true;
    found.push_back(args_[i]);
  }
  if (found.size() < min) throw Error("missing " + what + "; " + see_help(command_));
  return found;
}

void Arguments::finish() const {
  for (std::size_t i = 0; i < args_.size(); ++i)
    if (!taken_[i]) throw Error("unexpected argument '" + args_[i] + "'; " + see_help(command_));
}

namespace {

// The integer `text` spells in decimal (an optional '-', then digits only),
// or nothing when it spells none or one outside int64_t: from_chars refuses
// a leading '+' or space and reports overflow instead of wrapping.
std::optional<std::int64_t> decimal(const std::string& text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, v);
  if (text.empty() || stop != end || error != std::errc()) return std::nullopt;
  return v;
}

}  // namespace

std::int64_t integer_in(const std::string& flag, const std::string& text, std::int64_t min,
                        std::int64_t max) {
  const auto v = decimal(text);
  if (!v || *v < min || *v > max)
    throw Error(flag + " '" + text + "' refused; expected an integer from " + std::to_string(min) +
                " to " + std::to_string(max));
  return *v;
}

double finite_number(const std::string& flag, const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, v);
  if (text.empty() || stop != end || error != std::errc() || !std::isfinite(v))
    throw Error(flag + " '" + text + "' refused; expected a finite number (e.g. 1, -0.5, 2e-3)");
  return v;
}

std::pair<int, int> shape_2d(const std::string& flag, const std::string& text, int max,
                             const std::string& example) {
  const std::size_t x = text.find('x');
  if (x != std::string::npos) {
    const auto m = decimal(text.substr(0, x)), n = decimal(text.substr(x + 1));
    if (m && n && *m >= 1 && *n >= 1 && *m <= max && *n <= max)
      return {static_cast<int>(*m), static_cast<int>(*n)};
  }
  throw Error(flag + " '" + text + "' refused; expected MxN with M and N from 1 to " +
              std::to_string(max) + " (e.g. " + example + ")");
}

const std::string& one_of(const std::string& flag, const std::string& text,
                          const std::vector<std::string>& accepted) {
  std::string names;
  for (const auto& a : accepted) {
    if (a == text) return a;
    names += (names.empty() ? "" : ", ") + a;
  }
  throw Error(flag + " '" + text + "' refused; accepted: " + names);
}

}  // namespace warpforge::cli
