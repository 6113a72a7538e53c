#include "lexer.hpp"

#include <array>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::ptx::detail {
namespace {

// PTX ISA 4.4 "Identifiers": followsym is [a-zA-Z0-9_$].
bool is_follow(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%';
}
// A byte the message can show: control bytes (a NUL would end what() early)
// and bytes past ASCII written as \xNN.
std::string printable(unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (c >= 0x20 && c < 0x7f) return std::string(1, static_cast<char>(c));
  return std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

class Lexer {
 public:
  Lexer(std::string_view text, std::string_view filename) : text_(text), filename_(filename) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    out.reserve(text_.size() / 4);
    for (;;) {
      skip_space_and_comments();
      if (pos_ >= text_.size()) break;
      out.push_back(next());
    }
    out.push_back(Token{TokenKind::end, {}, line_, column()});
    return out;
  }

 private:
  char at(std::size_t i) const { return i < text_.size() ? text_[i] : '\0'; }
  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }

  void newline_at(std::size_t i) {
    ++line_;
    line_start_ = i + 1;
  }

  // Reports at `start`, where the bad token begins, on the current line.
  [[noreturn]] void fail_from(std::size_t start, std::string found, const char* expected) const {
    throw ParseError(std::string(filename_), line_, static_cast<int>(start - line_start_) + 1,
                     std::move(found), expected);
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '\n') {
        newline_at(pos_);
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '/' && at(pos_ + 1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && at(pos_ + 1) == '*') {
        std::size_t close = text_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) fail_from(pos_, "/*", "'*/' closing the comment");
        for (std::size_t i = pos_; i < close; ++i)
          if (text_[i] == '\n') newline_at(i);
        pos_ = close + 2;
      } else {
        return;
      }
    }
  }

  Token make(TokenKind kind, std::size_t start) const {
    return Token{kind, text_.substr(start, pos_ - start), line_,
                 static_cast<int>(start - line_start_) + 1};
  }

  // A dotted word: identifier segments joined by '.', where segments after
  // the first may start with a digit (mma...m16n8k16, .2d) and hold `::`
  // (shared::cta, mbarrier::complete_tx::bytes, PTX ISA 9.7 modifiers).
  void scan_segments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (is_follow(c)) {
        ++pos_;
      } else if (c == ':' && at(pos_ + 1) == ':' && is_follow(at(pos_ + 2))) {
        pos_ += 2;
      } else if (c == '.' && is_follow(at(pos_ + 1))) {
        ++pos_;
      } else {
        return;
      }
    }
  }

  // PTX ISA 4.5.1 "Integer constants" and 4.5.2 "Floating-point constants".
  Token number(std::size_t start) {
    auto digits = [&](bool (*ok)(char)) {
      std::size_t from = pos_;
      while (pos_ < text_.size() && ok(text_[pos_])) ++pos_;
      return pos_ - from;
    };
    TokenKind kind = TokenKind::integer;
    char c1 = at(pos_ + 1);
    if (text_[pos_] == '0' && (c1 == 'f' || c1 == 'F' || c1 == 'd' || c1 == 'D')) {
      pos_ += 2;
      std::size_t want = (c1 == 'f' || c1 == 'F') ? 8 : 16;
      if (digits(is_hex) != want)
        fail_from(start, std::string(text_.substr(start, pos_ - start)),
                  "a hex float (0f + 8 or 0d + 16 hex digits)");
      kind = TokenKind::real;
    } else if (text_[pos_] == '0' && (c1 == 'x' || c1 == 'X')) {
      pos_ += 2;
      if (digits(is_hex) == 0)
        fail_from(start, std::string(text_.substr(start, pos_ - start)), "hex digits after 0x");
    } else if (text_[pos_] == '0' && (c1 == 'b' || c1 == 'B')) {
      pos_ += 2;
      if (digits([](char c) { return c == '0' || c == '1'; }) == 0)
        fail_from(start, std::string(text_.substr(start, pos_ - start)), "binary digits after 0b");
    } else {
      digits(is_digit);
      if (at(pos_) == '.' && is_digit(at(pos_ + 1))) {
        ++pos_;
        digits(is_digit);
        kind = TokenKind::real;
      }
      if ((at(pos_) == 'e' || at(pos_) == 'E') &&
          (is_digit(at(pos_ + 1)) ||
           ((at(pos_ + 1) == '-' || at(pos_ + 1) == '+') && is_digit(at(pos_ + 2))))) {
        pos_ += 2;
        digits(is_digit);
        kind = TokenKind::real;
      }
    }
    // PTX ISA 4.5.1: a leading 0 makes an integer octal.
    if (kind == TokenKind::integer && text_[start] == '0' && pos_ - start > 1 && c1 != 'x' &&
        c1 != 'X' && c1 != 'b' && c1 != 'B' &&
        text_.substr(start, pos_ - start).find_first_of("89") != std::string_view::npos)
      fail_from(start, std::string(text_.substr(start, pos_ - start)),
                "octal digits after a leading 0");
    if (kind == TokenKind::integer && (at(pos_) == 'U' || at(pos_) == 'u')) ++pos_;
    if (is_follow(at(pos_))) {
      std::size_t bad = pos_;
      while (is_follow(at(bad))) ++bad;
      fail_from(start, std::string(text_.substr(start, bad - start)), "a number");
    }
    return make(kind, start);
  }

  Token next() {
    std::size_t start = pos_;
    char c = text_[pos_];
    if (is_ident_start(c) && (c != '%' || is_follow(at(pos_ + 1)))) {
      ++pos_;
      scan_segments();
      return make(TokenKind::word, start);
    }
    if (c == '.' && is_follow(at(pos_ + 1)) && !is_digit(at(pos_ + 1))) {
      ++pos_;
      while (is_follow(at(pos_))) ++pos_;
      return make(TokenKind::directive, start);
    }
    if (is_digit(c)) return number(start);
    if (c == '"') {
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n')
        pos_ += text_[pos_] == '\\' ? 2 : 1;
      if (pos_ >= text_.size() || text_[pos_] != '"')
        fail_from(start, "\"", "'\"' closing the string on the same line");
      ++pos_;
      Token t = make(TokenKind::string, start);
      t.text = t.text.substr(1, t.text.size() - 2);
      return t;
    }
    // Two-character operators of constant expressions (PTX ISA 4.6); none of
    // these pairs occurs otherwise.
    static constexpr std::array<std::string_view, 8> kPairs = {
        "<<", ">>", "<=", ">=", "==", "!=", "&&", "||"};
    for (auto pair : kPairs)
      if (text_.substr(pos_, 2) == pair) {
        pos_ += 2;
        return make(TokenKind::punct, start);
      }
    // '%' starts a register name (%r1, and %3 is an identifier too, PTX ISA
    // 4.4); it is the remainder operator only before a character that no name
    // holds: `7 % 2`, `7 %(2)`. ptxas reads `7%2` the same way.
    static constexpr std::string_view kPunct = ",;:{}()[]<>+-@!|=*/~^&?";
    if (kPunct.find(c) != std::string_view::npos || (c == '%' && !is_follow(at(pos_ + 1)))) {
      ++pos_;
      return make(TokenKind::punct, start);
    }
    fail_from(start, printable(static_cast<unsigned char>(c)), "a PTX token");
  }

  std::string_view text_;
  std::string_view filename_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;
  int line_ = 1;
};

}  // namespace

std::vector<Token> lex(std::string_view text, std::string_view filename) {
  return Lexer(text, filename).run();
}

}  // namespace warpforge::ptx::detail
