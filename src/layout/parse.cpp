#include "warpforge/layout/parse.hpp"

#include <cctype>
#include <limits>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::layout {

namespace {

// The expression in quotes for a message: whole when short, else its start and
// its length, so that one refusal stays one readable line.
std::string quoted(std::string_view text) {
  constexpr size_t kShown = 60;
  if (text.size() <= kShown) return "\"" + std::string(text) + "\"";
  return "\"" + std::string(text.substr(0, kShown)) + "...\" (" + std::to_string(text.size()) +
         " characters)";
}

// A recursive-descent reader over one expression; `pos_` is the next
// unread character.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  IntTuple tuple() {
    skip_spaces();
    if (peek() == '(') {
      // Each '(' is one level of recursion here and in every function that
      // walks the tuple afterwards: bounded, so that hostile input gets a
      // LayoutError rather than a stack overflow (as the PTX parser bounds its own).
      if (++depth_ > kMaxDepth) fail("at most " + std::to_string(kMaxDepth) + " levels of nesting");
      ++pos_;
      std::vector<IntTuple> modes{tuple()};
      for (skip_spaces(); peek() == ','; skip_spaces()) {
        ++pos_;
        modes.push_back(tuple());
      }
      expect(')', "',' or ')'");
      --depth_;
      return IntTuple(std::move(modes));
    }
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("an integer or '('");
    int64_t value = 0;
    const size_t start = pos_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        pos_ = start;
        fail("an integer below 2^63");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    return IntTuple(value);
  }

  // Consumes `c` after optional spaces, or refuses naming `expected`.
  void expect(char c, const std::string& expected) {
    skip_spaces();
    if (peek() != c) fail(expected);
    ++pos_;
  }

  bool at_end() {
    skip_spaces();
    return pos_ == text_.size();
  }

  [[noreturn]] void fail(const std::string& expected) const {
    const std::string found =
        pos_ < text_.size() ? "'" + std::string(1, text_[pos_]) + "'" : "the end of the text";
    throw LayoutError("layout expression " + quoted(text_) + ": at position " +
                      std::to_string(pos_) + " found " + found + ", expected " + expected);
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_spaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  static constexpr int kMaxDepth = 200;
  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

IntTuple parse_int_tuple(std::string_view text) {
  Reader reader(text);
  IntTuple t = reader.tuple();
  if (!reader.at_end()) reader.fail("the end of the text");
  return t;
}

Layout parse_layout(std::string_view text) {
  Reader reader(text);
  IntTuple shape = reader.tuple();
  if (reader.at_end()) return column_major(shape);
  reader.expect(':', "':' and a stride, or the end of the text");
  IntTuple stride = reader.tuple();
  if (!reader.at_end()) reader.fail("the end of the text");
  return Layout(std::move(shape), std::move(stride));
}

}  // namespace warpforge::layout
