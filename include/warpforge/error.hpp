// The root of warpforge's exception hierarchy. Every refusal the library makes
// is one of these, and its message says what was wrong, with which values, and
// what would have been accepted.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace warpforge {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Misuse of the DSL: wrong operand count or type, foreign register, unknown name.
class DslError : public Error {
 public:
  using Error::Error;
};

// An instruction used on a target that does not have it.
class TargetError : public DslError {
 public:
  using DslError::DslError;
};

// A PTX module that is structurally invalid (emitter or verifier refusal).
class PtxError : public Error {
 public:
  using Error::Error;
};

// PTX text the parser cannot read. Carries where (1-based line and column of
// the offending token), what it found and what would have been accepted; the
// message says all of it as "file:line:column: expected X, found 'tok'".
class ParseError : public PtxError {
 public:
  ParseError(const std::string& file, int line, int column, std::string token, std::string expected)
      : PtxError(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": expected " + expected +
                 ", found " + (token.empty() ? std::string("end of input") : "'" + token + "'")),
        line_(line),
        column_(column),
        token_(std::move(token)),
        expected_(std::move(expected)) {}

  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& token() const { return token_; }  // empty at end of input
  const std::string& expected() const { return expected_; }

 private:
  int line_;
  int column_;
  std::string token_;
  std::string expected_;
};

}  // namespace warpforge
