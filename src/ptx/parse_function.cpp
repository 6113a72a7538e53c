// .entry and .func definitions and declarations with their bodies (PTX ISA
// 11.2 "Kernel and Function Directives", 11.3 "Control Flow Directives").
#include <string>
#include <unordered_set>

#include "grammar.hpp"

namespace warpforge::ptx::detail {
namespace {

// `@%p` or `@!%p` before an instruction (PTX ISA 9.3 "Predicated Execution").
Guard parse_guard(TokenCursor& in) {
  Guard g;
  g.negated = in.accept_punct('!');
  g.pred = std::string(in.expect(TokenKind::word, "a predicate register after '@'").text);
  return g;
}

Instruction parse_instruction(TokenCursor& in, std::optional<Guard> guard) {
  const Token& op = in.peek();
  if (op.kind != TokenKind::word || op.text[0] == '%')
    in.fail(guard ? "an instruction after the guard" : "a statement");
  std::string why;
  std::optional<Instruction> known = Instruction::parse_opcode(op.text, why);
  if (!known) in.fail("an instruction of the PTX ISA (" + why + ")");
  in.next();
  Instruction inst = std::move(*known);
  inst.guard = std::move(guard);
  if (in.accept_punct(';')) return inst;
  do {
    inst.operands.push_back(parse_operand(in));
  } while (in.accept_punct(','));
  if (!in.accept_punct(';')) in.fail("',' or ';' after an operand");
  return inst;
}

Block parse_block(TokenCursor& in);

void parse_statement(TokenCursor& in, std::vector<Statement>& out) {
  const Token& t = in.peek();
  if (in.accept_punct('{')) {
    out.push_back(parse_block(in));
  } else if (t.kind == TokenKind::directive) {
    in.next();
    auto linkage = linkage_from_directive(t.text);
    const Token& space_token = linkage ? in.next() : t;
    if (auto space = space_from_directive(space_token.text);
        space && space_token.kind == TokenKind::directive) {
      for (auto& v : parse_declaration(in, linkage.value_or(Linkage::none), *space, true))
        out.push_back(std::move(v));
      in.expect_punct(';');
    } else if (linkage) {
      in.fail_at(space_token, "a state space after the linkage");
    } else {
      out.push_back(parse_directive(in, t));
    }
  } else if (in.accept_punct('@')) {
    Guard g = parse_guard(in);
    out.push_back(parse_instruction(in, std::move(g)));
  } else if (t.kind == TokenKind::word && in.is_punct(':', 1) &&
             t.text.find('.') == std::string_view::npos && t.text[0] != '%') {
    in.next();
    in.next();
    out.push_back(Label{std::string(t.text)});
  } else {
    out.push_back(parse_instruction(in, std::nullopt));
  }
}

// After '{': statements through the matching '}'.
Block parse_block(TokenCursor& in) {
  TokenCursor::Nesting nesting(in);
  Block b;
  while (!in.accept_punct('}')) {
    if (in.at_end()) in.fail("'}' closing the block");
    parse_statement(in, b.body);
  }
  return b;
}

// Names the body declares: labels, and registers declared without '%' (inline
// asm's `.reg .pred done;`), which only declarations tell from symbols.
struct BodyNames {
  std::unordered_set<std::string> labels;
  std::unordered_set<std::string> registers;

  void collect(const Block& b) {
    for (const auto& s : b.body) {
      if (const auto* l = std::get_if<Label>(&s))
        labels.insert(l->name);
      else if (const auto* v = std::get_if<Variable>(&s); v && v->space == Space::reg && !v->range)
        registers.insert(v->name);
      else if (const auto* nested = std::get_if<Block>(&s))
        collect(*nested);
    }
  }

  void resolve(Operand& op) const {
    if (op.kind == Operand::Kind::symbol && op.offset == 0) {
      if (labels.count(op.text))
        op.kind = Operand::Kind::label;
      else if (registers.count(op.text))
        op.kind = Operand::Kind::reg;
    }
    for (auto& e : op.elems) resolve(e);
  }

  void resolve(Block& b) const {
    for (auto& s : b.body) {
      if (auto* inst = std::get_if<Instruction>(&s)) {
        for (auto& op : inst->operands) resolve(op);
      } else if (auto* nested = std::get_if<Block>(&s)) {
        resolve(*nested);
      }
    }
  }
};

}  // namespace

Function parse_function(TokenCursor& in, Linkage linkage) {
  Function f;
  f.linkage = linkage;
  f.is_entry = in.next().text == ".entry";
  if (!f.is_entry && in.is_punct('(')) f.returns = parse_param_list(in);
  f.name = std::string(in.expect(TokenKind::word, "a function name").text);
  if (in.is_punct('(')) f.params = parse_param_list(in);
  while (in.is(TokenKind::directive)) {
    const Token& d = in.next();
    f.directives.push_back(parse_directive(in, d));
  }
  if (in.accept_punct(';')) return f;  // a declaration (prototype)
  if (!in.accept_punct('{')) in.fail("'{' opening the body or ';' ending a declaration");
  f.body = parse_block(in);
  BodyNames names;
  names.collect(*f.body);
  names.resolve(*f.body);
  return f;
}

}  // namespace warpforge::ptx::detail
