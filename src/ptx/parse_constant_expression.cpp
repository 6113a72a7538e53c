// Integer constant expressions (PTX ISA 4.6 "Constant Expressions"): C's
// operators and precedence over 64-bit values that are either signed (.s64)
// or unsigned (.u64), folded while parsing. Where the ISA leaves a case open,
// the rule here is what ptxas computes (checked by comparing the machine code
// of `mov.u64 %rd, <expression>` with that of `mov.u64 %rd, <value>`):
//   - arithmetic wraps around in 64 bits;
//   - a shift count is taken modulo 64 (`1 << 64` is 1, `1 << -1` is 1 << 63);
//   - `/` divides signed operands with truncation toward zero;
//   - `%` takes the remainder of the two 64-bit patterns read as unsigned
//     (`-7 % 2` is 1), whatever the operands' signedness;
//   - division or remainder by zero is an error ("Constant expression has
//     division by zero"), and so is the one signed division that overflows,
//     -2^63 / -1, on which ptxas 13.0 dies of SIGFPE.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "grammar.hpp"

namespace warpforge::ptx::detail {
namespace {

// Binary operators by precedence, loosest first (PTX ISA 4.6.1, Table
// "Operator Precedence"); all are left-associative. The conditional `?:`
// binds looser than all of them and is right-associative.
constexpr std::array<std::array<std::string_view, 4>, 10> kLevels = {{
    {"||"},
    {"&&"},
    {"|"},
    {"^"},
    {"&"},
    {"==", "!="},
    {"<", ">", "<=", ">="},
    {"<<", ">>"},
    {"+", "-"},
    {"*", "/", "%"},
}};

bool is_binary_operator(const Token& t) {
  if (t.kind != TokenKind::punct) return false;
  for (const auto& level : kLevels)
    for (auto op : level)
      if (!op.empty() && op == t.text) return true;
  return t.text == "?";
}

Constant signed_value(std::int64_t v) {
  return {static_cast<std::uint64_t>(v), false};
}
Constant truth(bool b) {
  return signed_value(b ? 1 : 0);
}

class ExpressionParser {
 public:
  explicit ExpressionParser(TokenCursor& in) : in_(in), start_(in.position()) {}

  Constant conditional() {
    TokenCursor::Nesting nesting(in_);
    Constant condition = binary(0);
    if (!in_.accept_punct('?')) return condition;
    Constant if_true = conditional();
    in_.expect_punct(':');
    Constant if_false = conditional();
    // The two results take the usual conversions, as the other binary operators do.
    bool is_unsigned = if_true.is_unsigned || if_false.is_unsigned;
    return {condition.bits ? if_true.bits : if_false.bits, is_unsigned};
  }

 private:
  Constant binary(std::size_t level) {
    if (level == kLevels.size()) return unary();
    Constant left = binary(level + 1);
    for (;;) {
      const Token& op = in_.peek();
      auto& ops = kLevels[level];
      if (op.kind != TokenKind::punct || std::find(ops.begin(), ops.end(), op.text) == ops.end())
        return left;
      in_.next();
      Constant right = binary(level + 1);
      left = apply(op, left, right);
    }
  }

  Constant unary() {
    TokenCursor::Nesting nesting(in_);
    const Token& t = in_.peek();
    if (t.kind == TokenKind::integer) {
      in_.next();
      return literal(t);
    }
    if (in_.accept_punct('(')) {
      // `(.s64)` and `(.u64)` are casts (PTX ISA 4.6.1), at the unary level.
      if ((in_.is(TokenKind::directive, ".s64") || in_.is(TokenKind::directive, ".u64")) &&
          in_.is_punct(')', 1)) {
        bool to_unsigned = in_.next().text == ".u64";
        in_.next();
        return {unary().bits, to_unsigned};
      }
      Constant inner = conditional();
      in_.expect_punct(')');
      return inner;
    }
    if (t.kind == TokenKind::punct &&
        (t.text == "-" || t.text == "+" || t.text == "!" || t.text == "~")) {
      in_.next();
      Constant v = unary();
      switch (t.text[0]) {
        case '-':
          return {0 - v.bits, v.is_unsigned};
        case '+':
          return v;
        case '!':
          return truth(v.bits == 0);  // signed 0 or 1
        default:
          return {~v.bits, true};  // PTX ISA 4.6.2: ~ gives .u64
      }
    }
    in_.fail("an integer, '(' or a unary operator (- + ! ~) in a constant expression");
  }

  // PTX ISA 4.6.2: a literal is .s64 unless it has the U suffix or does not
  // fit in .s64.
  Constant literal(const Token& t) {
    Operand op = Operand::imm_text(Operand::Kind::imm_int, std::string(t.text));
    std::uint64_t bits = 0;
    try {
      bits = static_cast<std::uint64_t>(op.int_value());
    } catch (const PtxError&) {
      in_.fail_at(t, "an integer that fits in 64 bits (PTX ISA 4.5.1)");
    }
    bool suffix = t.text.back() == 'U' || t.text.back() == 'u';
    return {bits, suffix || bits > static_cast<std::uint64_t>(INT64_MAX)};
  }

  Constant apply(const Token& op, Constant a, Constant b) const {
    const bool u = a.is_unsigned || b.is_unsigned;  // the usual conversions
    const auto sa = static_cast<std::int64_t>(a.bits), sb = static_cast<std::int64_t>(b.bits);
    const std::string_view o = op.text;
    if ((o == "/" || o == "%") && b.bits == 0)
      in_.fail_at(op, "a non-zero divisor: the constant expression '" +
                          in_.text(start_, in_.position()) +
                          "' divides by zero, which PTX forbids (PTX ISA 4.6)");
    if (o == "*") return {a.bits * b.bits, u};
    if (o == "/") {
      if (u) return {a.bits / b.bits, true};
      if (sa == INT64_MIN && sb == -1)
        in_.fail_at(op, "a signed division that fits in 64 bits: the constant expression '" +
                            in_.text(start_, in_.position()) +
                            "' divides -2^63 by -1, whose quotient 2^63 is not an .s64 (write it "
                            "unsigned, with 1U)");
      return signed_value(sa / sb);
    }
    if (o == "%") return {a.bits % b.bits, u};
    if (o == "+") return {a.bits + b.bits, u};
    if (o == "-") return {a.bits - b.bits, u};
    // Shifts keep the left operand's type; >> is arithmetic on .s64.
    if (o == "<<") return {a.bits << (b.bits & 63), a.is_unsigned};
    if (o == ">>")
      return a.is_unsigned ? Constant{a.bits >> (b.bits & 63), true}
                           : signed_value(sa >> (b.bits & 63));
    if (o == "&") return {a.bits & b.bits, u};
    if (o == "^") return {a.bits ^ b.bits, u};
    if (o == "|") return {a.bits | b.bits, u};
    // Comparisons and the logical operators give .s64 0 or 1.
    if (o == "&&") return truth(a.bits && b.bits);
    if (o == "||") return truth(a.bits || b.bits);
    if (o == "==") return truth(a.bits == b.bits);
    if (o == "!=") return truth(a.bits != b.bits);
    auto less = [&](Constant x, Constant y) {
      return u ? x.bits < y.bits
               : static_cast<std::int64_t>(x.bits) < static_cast<std::int64_t>(y.bits);
    };
    if (o == "<") return truth(less(a, b));
    if (o == ">") return truth(less(b, a));
    if (o == "<=") return truth(!less(b, a));
    return truth(!less(a, b));  // >=
  }

  TokenCursor& in_;
  std::size_t start_;
};

}  // namespace

std::int64_t Constant::value() const {
  return static_cast<std::int64_t>(bits);
}

Operand Constant::operand() const {
  return is_unsigned ? Operand::imm_text(Operand::Kind::imm_int, std::to_string(bits) + "U")
                     : Operand::imm(value());
}

bool starts_constant_expression(const TokenCursor& in) {
  const Token& t = in.peek();
  if (t.kind == TokenKind::integer) return is_binary_operator(in.peek(1));
  if (t.kind != TokenKind::punct) return false;
  if (t.text == "~" || t.text == "+") return true;
  if (t.text == "!") return !in.is(TokenKind::word, {}, 1);  // !%p is a negated predicate
  if (t.text == "-") {  // a bare -N or -1.5 stays an immediate as written
    if (in.is(TokenKind::integer, {}, 1)) return is_binary_operator(in.peek(2));
    const Token& u = in.peek(1);
    return u.kind == TokenKind::punct &&
           (u.text == "(" || u.text == "-" || u.text == "+" || u.text == "~" || u.text == "!");
  }
  if (t.text != "(") return false;
  // `(` opens a call's operand list unless what it encloses is a constant
  // expression with an operator in it or one follows: `(1)` stays a list.
  int depth = 0;
  bool has_operator = false;
  for (std::size_t ahead = 0;; ++ahead) {
    const Token& u = in.peek(ahead);
    if (u.kind == TokenKind::integer) continue;
    if (u.kind == TokenKind::directive && (u.text == ".s64" || u.text == ".u64")) {
      has_operator = true;
      continue;
    }
    if (u.kind != TokenKind::punct) return false;
    if (u.text == "(") {
      ++depth;
    } else if (u.text == ")") {
      if (--depth == 0) return has_operator || is_binary_operator(in.peek(ahead + 1));
    } else if (is_binary_operator(u) || u.text == "~" || u.text == "!" || u.text == ":") {
      has_operator = true;
    } else {
      return false;
    }
  }
}

Constant parse_constant_expression(TokenCursor& in) {
  return ExpressionParser(in).conditional();
}

}  // namespace warpforge::ptx::detail
