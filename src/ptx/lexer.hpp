// Splits PTX text into tokens (PTX ISA 4 "Syntax"). Internal to the parser.
// Comments are dropped; newlines are not tokens, but every token knows its
// line, which the few line-terminated directives (.loc, .file, section data)
// need.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace warpforge::ptx::detail {

enum class TokenKind : std::uint8_t {
  word,       // identifier or opcode, dots and `::` included: ld.global.v4.b32, %tid.x, $L__BB0_1
  directive,  // .version, .b32, .debug_info (text includes the dot)
  integer,    // 42, 0x1F, 017, 0b101, 7U (no sign: '-' is punctuation)
  real,       // 0f3F800000, 0d3FF0000000000000, 1.5, 9.0
  string,     // "text" (text excludes the quotes)
  punct,      // one of , ; : { } ( ) [ ] < > + - @ ! | = and the operators of constant
              // expressions (PTX ISA 4.6): * / % ~ ^ & ? << >> <= >= == != && ||
  end,        // end of input
};

struct Token {
  TokenKind kind = TokenKind::end;
  std::string_view text;
  int line = 0;
  int column = 0;
};

// Throws ParseError at the first character that starts no token.
std::vector<Token> lex(std::string_view text, std::string_view filename);

}  // namespace warpforge::ptx::detail
