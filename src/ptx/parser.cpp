// The module level (PTX ISA 11.1 "PTX Module Directives"): header, variables,
// functions, .file and other directives, debug sections.
#include "warpforge/ptx/parser.hpp"

#include <charconv>
#include <string>

#include "grammar.hpp"

namespace warpforge::ptx {
namespace detail {
namespace {

// `.version M.N`: the lexer reads M.N as one real token.
void parse_version(TokenCursor& in, Module& m) {
  if (!in.accept_directive(".version")) in.fail("'.version' first in the module");
  const Token& t = in.peek();
  std::string_view text = t.text;
  std::size_t dot = text.find('.');
  auto read = [&](std::string_view part, int& out) {
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  if (t.kind != TokenKind::real || dot == std::string_view::npos ||
      !read(text.substr(0, dot), m.version_major) || !read(text.substr(dot + 1), m.version_minor))
    in.fail("a version number major.minor");
  in.next();
}

// `.target sm_90a[, debug][, texmode_independent]`, then `.address_size N`.
void parse_header(TokenCursor& in, Module& m) {
  parse_version(in, m);
  if (!in.accept_directive(".target")) in.fail("'.target' after .version");
  do {
    m.target.emplace_back(in.expect(TokenKind::word, "a target name (sm_90a, debug, ...)").text);
  } while (in.accept_punct(','));
  if (in.accept_directive(".address_size")) {
    const Token& t = in.peek();
    m.address_size = static_cast<int>(parse_int(in));
    if (m.address_size != 32 && m.address_size != 64) in.fail_at(t, "an address size of 32 or 64");
  }
}

// `.section .debug_info { .b8 1, 2 \n .b32 .debug_abbrev \n label: ... }`:
// DWARF data, one data directive per line.
Section parse_section(TokenCursor& in) {
  Section s;
  const Token& name = in.peek();
  if (name.kind != TokenKind::directive && name.kind != TokenKind::word) in.fail("a section name");
  s.name = std::string(in.next().text);
  in.expect_punct('{');
  while (!in.accept_punct('}')) {
    const Token& t = in.peek();
    Section::Line line;
    if (t.kind == TokenKind::word && in.is_punct(':', 1)) {
      line.label = std::string(t.text);
      in.next();
      in.next();
    } else if (auto type =
                   t.kind == TokenKind::directive ? parse_type(t.text.substr(1)) : std::nullopt) {
      in.next();
      line.type = *type;
      do {
        line.values.push_back(parse_operand(in));
      } while (in.accept_punct(','));
    } else {
      in.fail("a data directive (.b8, .b32, .b64), a label or '}' in the section");
    }
    s.lines.push_back(std::move(line));
  }
  return s;
}

void parse_item(TokenCursor& in, Module& m) {
  const Token& t = in.peek();
  if (t.kind != TokenKind::directive)
    in.fail("a module-level directive (.entry, .func, a variable, .file, ...)");
  auto linkage = linkage_from_directive(t.text);
  if (linkage) in.next();
  const Token& k = in.peek();
  if (k.text == ".entry" || k.text == ".func") {
    m.items.push_back(parse_function(in, linkage.value_or(Linkage::none)));
  } else if (auto space =
                 k.kind == TokenKind::directive ? space_from_directive(k.text) : std::nullopt) {
    in.next();
    for (auto& v : parse_declaration(in, linkage.value_or(Linkage::none), *space, true))
      m.items.push_back(std::move(v));
    in.expect_punct(';');
  } else if (linkage || k.kind != TokenKind::directive) {
    in.fail("'.entry', '.func' or a state space after the linkage");
  } else if (k.text == ".section") {
    in.next();
    m.items.push_back(parse_section(in));
  } else {
    in.next();
    m.items.push_back(parse_directive(in, k));
  }
}

}  // namespace
}  // namespace detail

Module parse(std::string_view text, std::string_view filename) {
  detail::TokenCursor in(detail::lex(text, filename), filename);
  Module m;
  detail::parse_header(in, m);
  while (!in.at_end()) detail::parse_item(in, m);
  return m;
}

}  // namespace warpforge::ptx
