// A read position in the token list with the checks every grammar rule uses.
// Internal to the parser; every refusal is a ParseError at the current token.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lexer.hpp"
#include "warpforge/error.hpp"

namespace warpforge::ptx::detail {

class TokenCursor {
 public:
  TokenCursor(std::vector<Token> tokens, std::string_view filename)
      : tokens_(std::move(tokens)), filename_(filename) {}

  const Token& peek(std::size_t ahead = 0) const {
    std::size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& previous() const { return tokens_[pos_ ? pos_ - 1 : 0]; }
  // The read position, for rules that quote what they read (text).
  std::size_t position() const { return pos_; }
  // The tokens in [from, to) joined by spaces, to quote what a rule read.
  std::string text(std::size_t from, std::size_t to) const {
    std::string out;
    for (std::size_t i = from; i < to && i < tokens_.size(); ++i)
      out += (i > from ? " " : "") + std::string(tokens_[i].text);
    return out;
  }
  bool at_end() const { return peek().kind == TokenKind::end; }

  const Token& next() {
    const Token& t = peek();
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }

  bool is(TokenKind kind, std::string_view text = {}, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == kind && (text.empty() || t.text == text);
  }
  bool is_punct(char c, std::size_t ahead = 0) const {
    return is(TokenKind::punct, std::string_view(&c, 1), ahead);
  }
  // Punctuation of one or two characters: "<<", "&&", "*".
  bool is_punct(std::string_view p, std::size_t ahead = 0) const {
    return is(TokenKind::punct, p, ahead);
  }

  bool accept_punct(char c) {
    if (!is_punct(c)) return false;
    next();
    return true;
  }
  bool accept_directive(std::string_view name) {
    if (!is(TokenKind::directive, name)) return false;
    next();
    return true;
  }

  const Token& expect(TokenKind kind, const char* what) {
    if (!is(kind)) fail(what);
    return next();
  }
  void expect_punct(char c) {
    if (!accept_punct(c)) fail(std::string("'") + c + "'");
  }

  // Bounds the recursion of nested rules (blocks, braces, operands) so that
  // hostile input gets a ParseError rather than a stack overflow.
  class Nesting {
   public:
    explicit Nesting(TokenCursor& in) : in_(in) {
      if (++in_.depth_ > kMaxDepth)
        in_.fail("at most " + std::to_string(kMaxDepth) + " levels of nesting");
    }
    ~Nesting() { --in_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    TokenCursor& in_;
  };

  [[noreturn]] void fail(const std::string& expected) const { fail_at(peek(), expected); }
  [[noreturn]] void fail_at(const Token& t, const std::string& expected) const {
    throw ParseError(std::string(filename_), t.line, t.column, std::string(t.text), expected);
  }

 private:
  std::vector<Token> tokens_;
  std::string_view filename_;
  std::size_t pos_ = 0;
  static constexpr int kMaxDepth = 200;
  int depth_ = 0;
};

}  // namespace warpforge::ptx::detail
