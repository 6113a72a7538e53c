// Operands and initializers (PTX ISA 6 "Instruction Operands", 5.4.4
// "Initializers").
#include <array>
#include <string>

#include "grammar.hpp"

namespace warpforge::ptx::detail {
namespace {

// PTX ISA 10 "Special Registers": the names, without '%' and any `.x` suffix,
// that are read-only special registers rather than declared ones.
bool is_special_register(std::string_view name) {
  // clang-format off
  static constexpr std::array<std::string_view, 35> kNames = {
      "tid", "ntid", "laneid", "warpid", "nwarpid", "ctaid", "nctaid", "smid", "nsmid", "gridid",
      "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge", "lanemask_gt",
      "clock", "clock_hi", "clock64", "globaltimer", "globaltimer_lo", "globaltimer_hi",
      "total_smem_size", "aggr_smem_size", "dynamic_smem_size", "current_graph_exec",
      "is_explicit_cluster", "clusterid", "nclusterid", "cluster_ctaid", "cluster_nctaid",
      "cluster_ctarank", "cluster_nctarank",
      "reserved_smem_offset_begin", "reserved_smem_offset_end", "reserved_smem_offset_cap"};
  // clang-format on
  std::string_view base = name.substr(0, name.find('.'));
  for (auto n : kNames)
    if (n == base) return true;
  // %pm0..%pm7, %pm0_64..%pm7_64, %envreg0..%envreg31 and
  // %reserved_smem_offset_0/_1 are numbered families.
  auto numbered = [&](std::string_view prefix) {
    return base.size() > prefix.size() && base.substr(0, prefix.size()) == prefix &&
           base[prefix.size()] >= '0' && base[prefix.size()] <= '9';
  };
  return numbered("pm") || numbered("envreg") || numbered("reserved_smem_offset_");
}

// An integer literal wider than 64 bits (PTX ISA 4.5.1: integer constants
// are 64-bit) is refused here, at its line and column, rather than wrapped.
Operand immediate(const TokenCursor& in, const Token& t, bool negative) {
  auto kind = t.kind == TokenKind::integer ? Operand::Kind::imm_int : Operand::Kind::imm_float;
  Operand op = Operand::imm_text(kind, (negative ? "-" : "") + std::string(t.text));
  if (kind == Operand::Kind::imm_int) {
    try {
      op.int_value();
    } catch (const PtxError&) {
      in.fail_at(t, "an integer that fits in 64 bits (PTX ISA 4.5.1)");
    }
  }
  return op;
}

// `+N`, `+-N` or `-N` after a base, into op.offset (and whether it was a
// written zero); nothing when none follows. N may be a constant expression
// (PTX ISA 6.4.1: [reg+imm] where imm is one): `[%rd1+288*2]`; a leading '-'
// is its unary minus, so `[%rd1-4+2]` is 2 below %rd1.
void parse_offset(TokenCursor& in, Operand& op) {
  bool plus = in.accept_punct('+');
  if (!plus && !(in.is_punct('-') && (in.is(TokenKind::integer, {}, 1) || in.is_punct('(', 1))))
    return;
  op.offset = parse_constant_expression(in).value();
  op.explicit_zero_offset = op.offset == 0;
}

std::vector<Operand> parse_elements(TokenCursor& in, char close, bool allow_empty) {
  std::vector<Operand> elems;
  if (allow_empty && in.accept_punct(close)) return elems;
  do {
    elems.push_back(parse_operand(in));
  } while (in.accept_punct(','));
  in.expect_punct(close);
  return elems;
}

// After '[': base[+offset][, more...] ']' (PTX ISA 6.4.1 "Address Expressions";
// texture and tensor forms carry a coordinate vector after the base).
Operand parse_address(TokenCursor& in) {
  Operand base = parse_operand(in);
  Operand address = Operand::address(std::move(base));
  if (address.elems[0].kind == Operand::Kind::symbol) {  // [sym+4]: the offset is the address's
    std::swap(address.offset, address.elems[0].offset);
    std::swap(address.explicit_zero_offset, address.elems[0].explicit_zero_offset);
  } else {
    parse_offset(in, address);
  }
  while (in.accept_punct(',')) address.elems.push_back(parse_operand(in));
  in.expect_punct(']');
  return address;
}

Operand parse_word(TokenCursor& in) {
  const Token& t = in.next();
  std::string name(t.text);
  if (name == "_") return Operand::sink();
  if (name[0] == '%')
    return is_special_register(std::string_view(name).substr(1)) ? Operand::sreg(name)
                                                                 : Operand::reg(name);
  if (name == "generic" && in.is_punct('(')) {
    in.next();
    Operand generic = Operand::generic(
        Operand::symbol(std::string(in.expect(TokenKind::word, "a variable name").text)));
    in.expect_punct(')');
    parse_offset(in, generic);
    return generic;
  }
  Operand symbol = Operand::symbol(std::move(name));
  parse_offset(in, symbol);
  return symbol;
}

Operand parse_single(TokenCursor& in) {
  TokenCursor::Nesting nesting(in);
  // Folded to its value, which is what the IR keeps and the emitter writes.
  if (starts_constant_expression(in)) return parse_constant_expression(in).operand();
  const Token& t = in.peek();
  switch (t.kind) {
    case TokenKind::integer:
    case TokenKind::real:
      return immediate(in, in.next(), false);
    case TokenKind::string:
      return Operand::string(std::string(in.next().text));
    case TokenKind::word:
      return parse_word(in);
    case TokenKind::directive: {
      // Section data names other sections: `.b32 .debug_abbrev`, `.debug_loc+133`.
      Operand section = Operand::symbol(std::string(in.next().text));
      parse_offset(in, section);
      return section;
    }
    case TokenKind::punct:
      break;
    case TokenKind::end:
      in.fail("an operand");
  }
  switch (t.text[0]) {
    case '-': {
      in.next();
      if (!in.is(TokenKind::integer) && !in.is(TokenKind::real)) in.fail("a number after '-'");
      return immediate(in, in.next(), true);
    }
    case '!': {  // PTX ISA 9.7.6: a negated predicate source, !%p
      in.next();
      const Token& name = in.expect(TokenKind::word, "a predicate register after '!'");
      return Operand::reg(std::string(name.text), true);
    }
    case '{':
      in.next();
      return Operand::vector(parse_elements(in, '}', false));
    case '(':
      in.next();
      return Operand::list(parse_elements(in, ')', true));
    case '[':
      in.next();
      return parse_address(in);
    default:
      in.fail("an operand");
  }
}

}  // namespace

std::int64_t parse_int(TokenCursor& in) {
  bool negative = in.accept_punct('-');
  const Token& t = in.expect(TokenKind::integer, "an integer");
  return immediate(in, t, negative).int_value();
}

Operand parse_operand(TokenCursor& in) {
  Operand first = parse_single(in);
  if (!in.accept_punct('|')) return first;  // setp's `%p|%q` destination pair
  return Operand::pair(std::move(first), parse_single(in));
}

Initializer parse_initializer(TokenCursor& in) {
  TokenCursor::Nesting nesting(in);
  Initializer init;
  if (!in.accept_punct('{')) {
    init.value = parse_operand(in);
    return init;
  }
  do {
    init.elements.push_back(parse_initializer(in));
  } while (in.accept_punct(','));
  in.expect_punct('}');
  return init;
}

}  // namespace warpforge::ptx::detail
