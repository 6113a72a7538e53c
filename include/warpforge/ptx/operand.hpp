// One operand of a PTX instruction or directive (PTX ISA 6 "Instruction
// Operands"). Operands are a small recursive value type: a vector {a, b}, a
// parenthesised call list (a, b), a predicate pair p|q and an address [base+off]
// hold their parts in `elems`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace warpforge::ptx {

struct Operand {
  enum class Kind : std::uint8_t {
    reg,        // %r1 (text = name); `negated` for !%p
    sreg,       // %tid.x, %laneid, %clock64 ...
    imm_int,    // text kept exactly as written: 42, -1, 0x1F, 017
    imm_float,  // 0f3F800000, 0d3FF0000000000000, 1.5
    symbol,     // a variable, function or parameter name
    label,      // a branch target
    string,     // "text" (directive arguments), text without the quotes
    address,    // [elems...+offset]: elems[0] the base; [tex, {coords}] has two
    vector,     // {elems...}
    list,       // (elems...) in call and directive operand lists
    pair,       // elems[0]|elems[1], setp's two destinations
    sink,       // _
    generic,    // generic(elems[0])+offset: a variable's generic address in an
                // initializer (PTX ISA 5.4.4 "Initializers")
  };

  Kind kind = Kind::sink;
  std::string text;
  bool negated = false;
  std::int64_t offset = 0;  // address and generic offsets; a symbol's in `sym+4`
  std::vector<Operand> elems;
  // `+0` written out, as nvcc does in [%SP+0] and [param0+0]: ptxas -G emits
  // different code for [%SP] and [%SP+0], so the parser keeps the spelling.
  // Declared last so that positional initialization of the fields above keeps
  // its meaning.
  bool explicit_zero_offset = false;

  static Operand reg(std::string name, bool negated = false);
  static Operand sreg(std::string name);
  static Operand imm(std::int64_t value);
  static Operand imm_u(std::uint64_t value);
  static Operand imm_text(Kind kind, std::string text);  // exact spelling, int or float
  static Operand f32(float value);    // as 0fXXXXXXXX, exact
  static Operand f64(double value);   // as 0dXXXXXXXXXXXXXXXX, exact
  static Operand symbol(std::string name);
  static Operand label(std::string name);
  static Operand string(std::string text);
  static Operand address(Operand base, std::int64_t offset = 0);
  static Operand vector(std::vector<Operand> elems);
  static Operand list(std::vector<Operand> elems);
  static Operand pair(Operand first, Operand second);
  static Operand sink();
  static Operand generic(Operand symbol, std::int64_t offset = 0);

  bool is_register() const { return kind == Kind::reg; }
  bool is_immediate() const { return kind == Kind::imm_int || kind == Kind::imm_float; }

  // The value of an integer immediate in any PTX spelling (decimal, 0x hex,
  // 0b binary, leading-0 octal, optional U suffix); throws PtxError otherwise.
  std::int64_t int_value() const;
  // The value of a float immediate (0f/0d hex bit patterns or decimal).
  double float_value() const;

  friend bool operator==(const Operand&, const Operand&) = default;
};

// PTX text of one operand, as the emitter writes it.
std::string to_string(const Operand& op);

}  // namespace warpforge::ptx
