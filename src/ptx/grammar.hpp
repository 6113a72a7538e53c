// The parser's grammar rules, one file per concept (parse_operand.cpp,
// parse_variable.cpp, parse_directive.cpp, parse_function.cpp, parser.cpp).
// Internal: the public entry point is ptx::parse in parser.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "token_cursor.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ptx::detail {

// One instruction or directive operand (PTX ISA 6): registers, immediates,
// symbols, addresses, vectors, lists, pairs, the sink.
Operand parse_operand(TokenCursor& in);
// An integer literal with an optional leading '-', as an int64.
std::int64_t parse_int(TokenCursor& in);
// The value of a constant expression (PTX ISA 4.6) and whether PTX types it
// .u64 rather than .s64.
struct Constant {
  std::uint64_t bits = 0;
  bool is_unsigned = false;
  std::int64_t value() const;
  // An integer immediate of this value: decimal, with the U suffix when unsigned.
  Operand operand() const;
};
// Whether the tokens at the cursor are a constant expression with an operator
// in it (`288*2`, `((128 >> 4) << 16)`, `~0`), rather than one literal as
// written (`42`, `-1`, `0x1F`) or another operand.
bool starts_constant_expression(const TokenCursor& in);
// Reads and folds one constant expression; refuses division by zero.
Constant parse_constant_expression(TokenCursor& in);
// `= value` or `= {nested, lists}` after a variable name (PTX ISA 5.4.4).
Initializer parse_initializer(TokenCursor& in);

// The declaration after its linkage and space directive have been read,
// through the name, range, dimensions and initializer. With `allow_list`,
// `.reg .b32 a, b;` gives one Variable per name (statement context); without,
// a comma ends the declaration (parameter lists).
std::vector<Variable> parse_declaration(TokenCursor& in, Linkage linkage, Space space,
                                        bool allow_list);
// `( decl, decl )` of .entry/.func parameters and returns or a .callprototype.
std::vector<Variable> parse_param_list(TokenCursor& in);
// Maps ".global" to Space::global etc.; nullopt for other text.
std::optional<Space> space_from_directive(std::string_view text);
std::optional<Linkage> linkage_from_directive(std::string_view text);

// The arguments of a directive whose name token has been read; they end at
// a ';' (kept in Directive::semicolon), at the end of the line, or before a
// token that cannot start an operand.
Directive parse_directive(TokenCursor& in, const Token& name);

// `.entry`/`.func` after the linkage: signature, performance directives and
// body or ';'.
Function parse_function(TokenCursor& in, Linkage linkage);

}  // namespace warpforge::ptx::detail
