// Directives held generically by name and arguments (.loc, .file, .pragma,
// the performance directives of PTX ISA 11.4), and .callprototype, whose
// arguments are parameter declarations.
#include <string>

#include "grammar.hpp"

namespace warpforge::ptx::detail {
namespace {

// Tokens that begin a directive argument. Braces, brackets and directives do
// not: they begin what follows the directive (a body, a declaration).
bool starts_argument(const Token& t) {
  switch (t.kind) {
    case TokenKind::word:
    case TokenKind::integer:
    case TokenKind::real:
    case TokenKind::string:
      return true;
    case TokenKind::punct:
      return t.text == "-" || t.text == "(";
    default:
      return false;
  }
}

// PTX ISA 11.3.3: `.callprototype [(ret-param)] _ (param-list) [.noreturn];`
void parse_call_prototype(TokenCursor& in, Directive& d) {
  CallPrototype proto;
  if (in.is_punct('(')) proto.returns = parse_param_list(in);
  if (!in.is(TokenKind::word, "_"))
    in.fail("'_' standing for the function name in a .callprototype");
  in.next();
  proto.params = parse_param_list(in);
  proto.noreturn = in.accept_directive(".noreturn");
  in.expect_punct(';');
  d.semicolon = true;
  d.prototype = std::move(proto);
}

}  // namespace

Directive parse_directive(TokenCursor& in, const Token& name) {
  Directive d;
  d.name = std::string(name.text.substr(1));
  if (d.name == "callprototype") {
    parse_call_prototype(in, d);
    return d;
  }
  // Arguments continue on the directive's line, or on the next one after a
  // comma: .loc and .file end at the newline (PTX ISA 11.5), others at ';'.
  int line = name.line;
  bool spaced = false;
  std::vector<std::size_t> commas;
  for (;;) {
    if (in.accept_punct(';')) {
      d.semicolon = true;
      break;
    }
    bool comma = !d.args.empty() && in.accept_punct(',');
    if (!comma && (in.peek().line != line || !starts_argument(in.peek()))) break;
    if (comma && !starts_argument(in.peek())) in.fail("a directive argument after ','");
    if (comma)
      commas.push_back(d.args.size());
    else if (!d.args.empty())
      spaced = true;
    d.args.push_back(parse_operand(in));
    line = in.previous().line;
  }
  if (!commas.empty() && !spaced)
    d.comma_separated = true;
  else if (!commas.empty())
    d.comma_before = std::move(commas);
  return d;
}

}  // namespace warpforge::ptx::detail
