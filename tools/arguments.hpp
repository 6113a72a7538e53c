// The command line of one `warpforge` command, read strictly: every flag at
// most once, every value parsed whole (no silent truncation, no wrap-around,
// no NaN or infinity), and nothing left over. Each refusal is a
// warpforge::Error naming the flag, the value and what would be accepted.
//
//   Arguments args("gemm", raw);
//   const bool check = args.flag("--check");
//   const auto m = args.value("--m");            // std::optional<std::string>
//   const std::int64_t n = positive_integer("--n", *args.value("--n"));
//   const auto files = args.positionals(1, 1, "<in.ptx>");
//   args.finish();                                // refuses anything not asked for
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace warpforge::cli {

class Arguments {
 public:
  Arguments(std::string command, std::vector<std::string> args);

  // Whether the switch `name` is present (refused when given twice).
  bool flag(const std::string& name);
  // The value after `name`, absent when the flag is not given; refused when
  // given twice or when no value follows it.
  std::optional<std::string> value(const std::string& name);
  // The arguments not taken by flag() or value() that do not start with '-'
  // (call after every flag and value): between `min` and `max` of them, else
  // refused naming `what` ("<in.ptx>").
  std::vector<std::string> positionals(std::size_t min, std::size_t max, const std::string& what);
  // Refuses the first argument nobody asked for.
  void finish() const;

  const std::string& command() const { return command_; }

 private:
  std::string command_;
  std::vector<std::string> args_;
  std::vector<bool> taken_;
};

// An integer in [min, max] written in decimal digits only (no sign, spaces,
// suffix or exponent), e.g. "--m 99999999999" against max 2^31 - 1 is refused
// naming both.
std::int64_t integer_in(const std::string& flag, const std::string& text, std::int64_t min,
                        std::int64_t max);
inline std::int64_t positive_integer(const std::string& flag, const std::string& text) {
  return integer_in(flag, text, 1, INT64_MAX);
}
// A finite decimal number ("0.5", "-2", "1e-3"); NaN and infinities refused.
double finite_number(const std::string& flag, const std::string& text);
// "MxN" with both in [1, max] (an mma tile, a cluster shape).
std::pair<int, int> shape_2d(const std::string& flag, const std::string& text, int max,
                             const std::string& example);
// One of `accepted`, else refused listing them.
const std::string& one_of(const std::string& flag, const std::string& text,
                          const std::vector<std::string>& accepted);

}  // namespace warpforge::cli
