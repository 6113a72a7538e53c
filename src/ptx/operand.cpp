#include "warpforge/ptx/operand.hpp"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "warpforge/error.hpp"

namespace warpforge::ptx {

Operand Operand::reg(std::string name, bool negated) {
  Operand o;
  o.kind = Kind::reg;
  o.text = std::move(name);
  o.negated = negated;
  return o;
}

Operand Operand::sreg(std::string name) {
  Operand o;
  o.kind = Kind::sreg;
  o.text = std::move(name);
  return o;
}

Operand Operand::imm(std::int64_t value) { return imm_text(Kind::imm_int, std::to_string(value)); }

Operand Operand::imm_u(std::uint64_t value) {
  return imm_text(Kind::imm_int, std::to_string(value));
}

Operand Operand::imm_text(Kind kind, std::string text) {
  Operand o;
  o.kind = kind;
  o.text = std::move(text);
  return o;
}

Operand Operand::f32(float value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0f%08X", std::bit_cast<std::uint32_t>(value));
  return imm_text(Kind::imm_float, buf);
}

Operand Operand::f64(double value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0d%016llX",
                static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(value)));
  return imm_text(Kind::imm_float, buf);
}

Operand Operand::symbol(std::string name) {
  Operand o;
  o.kind = Kind::symbol;
  o.text = std::move(name);
  return o;
}

Operand Operand::label(std::string name) {
  Operand o;
  o.kind = Kind::label;
  o.text = std::move(name);
  return o;
}

Operand Operand::string(std::string text) {
  Operand o;
  o.kind = Kind::string;
  o.text = std::move(text);
  return o;
}

Operand Operand::address(Operand base, std::int64_t offset) {
  Operand o;
  o.kind = Kind::address;
  o.elems.push_back(std::move(base));
  o.offset = offset;
  return o;
}

Operand Operand::vector(std::vector<Operand> elems) {
  Operand o;
  o.kind = Kind::vector;
  o.elems = std::move(elems);
  return o;
}

Operand Operand::list(std::vector<Operand> elems) {
  Operand o;
  o.kind = Kind::list;
  o.elems = std::move(elems);
  return o;
}

Operand Operand::pair(Operand first, Operand second) {
  Operand o;
  o.kind = Kind::pair;
  o.elems = {std::move(first), std::move(second)};
  return o;
}

Operand Operand::sink() { return Operand{}; }

Operand Operand::generic(Operand symbol, std::int64_t offset) {
  Operand o;
  o.kind = Kind::generic;
  o.elems.push_back(std::move(symbol));
  o.offset = offset;
  return o;
}

std::int64_t Operand::int_value() const {
  if (kind != Kind::imm_int) throw PtxError("operand '" + to_string(*this) + "' is not an integer immediate");
  std::string t = text;
  if (!t.empty() && (t.back() == 'U' || t.back() == 'u')) t.pop_back();
  bool neg = !t.empty() && t[0] == '-';
  std::string digits = neg ? t.substr(1) : t;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits = digits.substr(2);
  } else if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'b' || digits[1] == 'B')) {
    base = 2;
    digits = digits.substr(2);
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;  // PTX ISA 4.5.1: a leading 0 means octal
    digits = digits.substr(1);
  }
  char* end = nullptr;
  errno = 0;
  std::uint64_t v = std::strtoull(digits.c_str(), &end, base);
  if (digits.empty() || *end != '\0') throw PtxError("malformed integer immediate '" + text + "'");
  // PTX ISA 4.5.1: integer constants are 64 bits wide.
  if (errno == ERANGE) throw PtxError("integer immediate '" + text + "' does not fit in 64 bits");
  return neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
}

double Operand::float_value() const {
  if (kind == Kind::imm_int) return static_cast<double>(int_value());
  if (kind != Kind::imm_float) throw PtxError("operand '" + to_string(*this) + "' is not a float immediate");
  // PTX ISA 4.5.1: 0f + 8 hex digits is an f32 bit pattern, 0d + 16 an f64 one.
  if (text.size() == 10 && (text[1] == 'f' || text[1] == 'F'))
    return std::bit_cast<float>(static_cast<std::uint32_t>(std::strtoul(text.c_str() + 2, nullptr, 16)));
  if (text.size() == 18 && (text[1] == 'd' || text[1] == 'D'))
    return std::bit_cast<double>(static_cast<std::uint64_t>(std::strtoull(text.c_str() + 2, nullptr, 16)));
  return std::strtod(text.c_str(), nullptr);
}

namespace {
// `+N`, or nvcc's `+-N` for a negative offset; nothing for zero unless
// `+0` was written.
std::string offset_suffix(const Operand& op) {
  return op.offset || op.explicit_zero_offset ? "+" + std::to_string(op.offset) : "";
}

}  // namespace

std::string to_string(const std::vector<Operand>& ops, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (i) out += separator;
    out += to_string(ops[i]);
  }
  return out;
}

std::string to_string(const Operand& op) {
  using K = Operand::Kind;
  switch (op.kind) {
    case K::reg: return (op.negated ? "!" : "") + op.text;
    case K::sreg: case K::imm_int: case K::imm_float: case K::label:
      return op.text;
    case K::symbol: return op.text + offset_suffix(op);
    case K::string: return "\"" + op.text + "\"";
    case K::address: {
      if (op.elems.empty()) return "[]";
      // The offset belongs to the base: [%rd1+8], [tex, {a, b}].
      std::string out = "[" + to_string(op.elems[0]) + offset_suffix(op);
      for (std::size_t i = 1; i < op.elems.size(); ++i) out += ", " + to_string(op.elems[i]);
      return out + "]";
    }
    case K::vector: return "{" + to_string(op.elems, ", ") + "}";
    case K::list: return "(" + to_string(op.elems, ", ") + ")";
    case K::pair: return to_string(op.elems, "|");
    case K::sink: return "_";
    case K::generic: return "generic(" + to_string(op.elems, "") + ")" + offset_suffix(op);
  }
  return {};
}

}  // namespace warpforge::ptx
