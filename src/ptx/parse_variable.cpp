// State-space declarations (PTX ISA 5.4 "Variables"): registers, arrays,
// initialized data, parameters with alignment and pointer attributes.
#include <string>

#include "grammar.hpp"

namespace warpforge::ptx::detail {
namespace {

// Positive integer used as an alignment, a vector width, a count or a size.
int parse_count(TokenCursor& in, const char* what) {
  const Token& t = in.peek();
  std::int64_t v = parse_int(in);
  if (v <= 0 || v > (std::int64_t{1} << 30)) in.fail_at(t, what);
  return static_cast<int>(v);
}

// `.attribute(.managed)` or `.attribute(.unified(hi, lo))` (PTX ISA 5.4.8),
// after `.attribute` has been read.
void parse_attribute_list(TokenCursor& in, Variable& v) {
  in.expect_punct('(');
  do {
    const Token& t = in.expect(TokenKind::directive, "a variable attribute (.managed, .unified)");
    std::string attribute(t.text.substr(1));
    if (attribute == "unified") {
      in.expect_punct('(');
      attribute += "(" + std::string(in.expect(TokenKind::integer, "the UUID's high 64 bits").text);
      in.expect_punct(',');
      attribute += ", " + std::string(in.expect(TokenKind::integer, "the UUID's low 64 bits").text) + ")";
      in.expect_punct(')');
    } else if (attribute != "managed") {
      in.fail_at(t, "a variable attribute (.managed, .unified)");
    }
    v.attributes.push_back(std::move(attribute));
  } while (in.accept_punct(','));
  in.expect_punct(')');
}

// The attribute directives between the space and the name: .align N,
// .v2/.v4/.v8, the type, and for parameters .ptr [.space] [.align N]
// (PTX ISA 5.1.6.4 "Kernel Function Parameter Attributes").
void parse_attributes(TokenCursor& in, Variable& v) {
  bool typed = false;
  while (in.is(TokenKind::directive)) {
    std::string_view d = in.peek().text.substr(1);
    if (d == "attribute" && !typed) {
      in.next();
      parse_attribute_list(in, v);
    } else if (d == "align") {
      in.next();
      (v.ptr ? v.ptr_align : v.align) = parse_count(in, "a positive alignment");
    } else if (d == "v2" || d == "v4" || d == "v8") {
      in.next();
      v.vector_width = d[1] - '0';
    } else if (d == "ptr" && typed && !v.ptr) {
      in.next();
      v.ptr = true;
    } else if (auto space = space_from_directive(in.peek().text); space && v.ptr && !v.ptr_space) {
      in.next();
      v.ptr_space = space;
    } else if (auto type = parse_type(d); type && !typed) {
      in.next();
      v.type = *type;
      typed = true;
    } else {
      break;
    }
  }
  if (!typed) in.fail("a type (.b32, .u64, .f32, ...)");
}

// name [<N>] {[N] | []} [= initializer], with the attributes already in `v`.
Variable parse_declarator(TokenCursor& in, Variable v) {
  v.name = std::string(in.expect(TokenKind::word, "a variable name").text);
  if (in.accept_punct('<')) {  // PTX ISA 5.4.1: %r<100> declares %r0 .. %r99
    v.range = parse_count(in, "a positive register count");
    in.expect_punct('>');
  }
  while (in.accept_punct('[')) {
    if (in.accept_punct(']')) {
      v.dims.push_back(std::nullopt);
      continue;
    }
    const Token& t = in.peek();
    std::int64_t n = parse_int(in);
    if (n < 0) in.fail_at(t, "a non-negative array size");
    v.dims.push_back(n);
    in.expect_punct(']');
  }
  if (in.accept_punct('=')) v.init = parse_initializer(in);
  return v;
}

}  // namespace

std::optional<Space> space_from_directive(std::string_view text) {
  if (text == ".reg") return Space::reg;
  if (text == ".sreg") return Space::sreg;
  if (text == ".const") return Space::const_;
  if (text == ".global") return Space::global;
  if (text == ".local") return Space::local;
  if (text == ".param") return Space::param;
  if (text == ".shared") return Space::shared;
  if (text == ".tex") return Space::tex;
  return std::nullopt;
}

std::optional<Linkage> linkage_from_directive(std::string_view text) {
  if (text == ".visible") return Linkage::visible;
  if (text == ".extern") return Linkage::extern_;
  if (text == ".weak") return Linkage::weak;
  if (text == ".common") return Linkage::common;
  return std::nullopt;
}

std::vector<Variable> parse_declaration(TokenCursor& in, Linkage linkage, Space space,
                                        bool allow_list) {
  Variable attrs;
  attrs.linkage = linkage;
  attrs.space = space;
  parse_attributes(in, attrs);
  std::vector<Variable> out;
  do {
    out.push_back(parse_declarator(in, attrs));
  } while (allow_list && in.accept_punct(','));
  return out;
}

std::vector<Variable> parse_param_list(TokenCursor& in) {
  std::vector<Variable> params;
  in.expect_punct('(');
  if (in.accept_punct(')')) return params;
  do {
    const Token& t = in.peek();
    auto space = space_from_directive(t.text);
    if (t.kind != TokenKind::directive || (space != Space::param && space != Space::reg))
      in.fail("a parameter declaration (.param or .reg)");
    in.next();
    params.push_back(parse_declaration(in, Linkage::none, *space, false).front());
  } while (in.accept_punct(','));
  in.expect_punct(')');
  return params;
}

}  // namespace warpforge::ptx::detail
