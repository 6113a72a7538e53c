// One generated C++ statement as a template: text with integer holes
// (register indices, immediates, address offsets). Statements that share
// their text and whose holes step by constant amounts fold into a C++ `for`
// loop that rebuilds them exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace warpforge::transpiler {

struct Code {
  static constexpr char kHole = '\x01';
  std::string text;                  // kHole marks each integer hole, in order
  std::vector<std::int64_t> values;  // one per hole

  Code() = default;
  Code(std::string t) : text(std::move(t)) {}  // NOLINT: plain text, no holes
  static Code hole(std::int64_t value) {
    Code c(std::string(1, kHole));
    c.values.push_back(value);
    return c;
  }

  Code& operator+=(const Code& o);
  friend Code operator+(Code a, const Code& b) { return a += b; }

  // The text with every hole written as its value.
  std::string render() const;
};

// `a, b, c`
Code join(const std::vector<Code>& parts, const std::string& separator = ", ");

// Writes `statements` (one line each, without indentation) at `indent`,
// folding exactly repetitive runs into `for (int i = 0; i < n; ++i)` loops.
void write_folded(const std::vector<Code>& statements, const std::string& indent, std::string& out);

}  // namespace warpforge::transpiler
