// setp and selp (PTX ISA 9.7.6 "Comparison and Selection Instructions").
#include <cmath>

#include "execute.hpp"
#include "float_format.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;

template <class T>
bool ordered_compare(Cmp c, T a, T b) {
  switch (c) {
    case Cmp::eq:
      return a == b;
    case Cmp::ne:
      return a != b;
    case Cmp::lt:
    case Cmp::lo:
      return a < b;
    case Cmp::le:
    case Cmp::ls:
      return a <= b;
    case Cmp::gt:
    case Cmp::hi:
      return a > b;
    case Cmp::ge:
    case Cmp::hs:
      return a >= b;
    default:
      return false;
  }
}

// PTX ISA 9.7.6.1, Table "Floating-point comparison operators": the ordered
// forms are false when either operand is NaN, the unordered (..u) forms true;
// num and nan test for NaN.
bool float_compare(Cmp c, double a, double b) {
  const bool unordered = std::isnan(a) || std::isnan(b);
  switch (c) {
    case Cmp::num:
      return !unordered;
    case Cmp::nan:
      return unordered;
    case Cmp::equ:
      return unordered || a == b;
    case Cmp::neu:
      return unordered || a != b;
    case Cmp::ltu:
      return unordered || a < b;
    case Cmp::leu:
      return unordered || a <= b;
    case Cmp::gtu:
      return unordered || a > b;
    case Cmp::geu:
      return unordered || a >= b;
    default:
      return !unordered && ordered_compare(c, a, b);
  }
}

double comparand_value(Type t, std::uint64_t bits) {
  if (t == Type::f64) return f64_of(bits);
  if (t == Type::f32) return f32_of(bits);
  return decode_float(static_cast<std::uint32_t>(bits), float_format(t));
}

// What a comparison needs to know of its type, worked out once per instruction.
struct CompareType {
  explicit CompareType(Type type)
      : t(type),
        is_float(ptx::is_float(type)),
        is_signed(ptx::is_signed(type)),
        bits(ptx::bits(type)) {}
  Type t;
  bool is_float, is_signed;
  int bits;
};

bool compare(Cmp c, const CompareType& ct, std::uint64_t a, std::uint64_t b) {
  if (ct.is_float) return float_compare(c, comparand_value(ct.t, a), comparand_value(ct.t, b));
  const int bits = ct.bits;
  const std::uint64_t m = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  // lo/ls/hi/hs are unsigned whatever the type; lt/le/gt/ge follow it.
  const bool is_unsigned_cmp = c == Cmp::lo || c == Cmp::ls || c == Cmp::hi || c == Cmp::hs;
  if (ct.is_signed && !is_unsigned_cmp) {
    const std::uint64_t sb = 1ull << (bits - 1);
    const auto sa = static_cast<std::int64_t>(((a & m) ^ sb) - sb);
    const auto sbv = static_cast<std::int64_t>(((b & m) ^ sb) - sb);
    return ordered_compare(c, sa, sbv);
  }
  return ordered_compare(c, a & m, b & m);
}

bool combine(BoolOp op, bool v, bool c) {
  switch (op) {
    case BoolOp::none:
      return v;
    case BoolOp::and_:
      return v && c;
    case BoolOp::or_:
      return v || c;
    case BoolOp::xor_:
      return v != c;
  }
  return v;
}

// The f16x2/bf16x2 forms of setp compare each half into one of the pair's
// predicates (PTX ISA 9.7.4.x setp.f16x2: p gets the lower half's result).
void setp_packed(const Inst& in, Warp& w, std::uint32_t active) {
  const CompareType half(in.type() == Type::f16x2 ? Type::f16 : Type::bf16);
  const auto cmp = static_cast<Cmp>(in.mode);
  const auto& dst = in.ops[0];
  for_lanes(active, [&](int l) {
    const std::uint64_t a = read(w, in.op0(1), l), b = read(w, in.op0(2), l);
    const bool c = in.ops.size() > 3 ? read(w, in.op0(3), l) != 0 : false;
    for (std::size_t h = 0; h < dst.size() && h < 2; ++h)
      write(w, dst[h], l,
            combine(in.combine,
                    compare(cmp, half, (a >> (16 * h)) & 0xFFFF, (b >> (16 * h)) & 0xFFFF), c));
  });
}

}  // namespace

void exec_compare(const Inst& in, Warp& w, std::uint32_t active) {
  if (in.op == Op::selp) {  // selp d, a, b, c: d = c ? a : b
    for_lanes(active, [&](int l) {
      write(w, in.op0(0), l,
            read(w, in.op0(3), l) != 0 ? read(w, in.op0(1), l) : read(w, in.op0(2), l));
    });
    return;
  }
  if (in.type() == Type::f16x2 || in.type() == Type::bf16x2) return setp_packed(in, w, active);
  // setp.cmp[.bool] p[|q], a, b[, c]: p = (a cmp b) bool c; q = !(a cmp b) bool c
  const auto cmp = static_cast<Cmp>(in.mode);
  const auto& dst = in.ops[0];
  const bool has_c = in.combine != BoolOp::none;
  const CompareType ct(in.type());
  if (has_c && in.ops.size() != 4)
    throw SimError("setp with .and/.or/.xor needs a predicate operand c");
  // .ftz: subnormal operands compare as zeros of their sign, as on an H100
  // (every such case recorded in tests/gpu_truth/compare_select.truth).
  const bool flush = in.ftz && ct.is_float && ct.bits <= 32;
  const auto operand = [&](int i, int l) {
    const std::uint64_t v = read(w, in.op0(static_cast<std::size_t>(i)), l);
    return flush ? std::uint64_t{flush_subnormal(static_cast<std::uint32_t>(v), float_format(ct.t))} : v;
  };
  for_lanes(active, [&](int l) {
    const bool v = compare(cmp, ct, operand(1, l), operand(2, l));
    const bool c = has_c ? read(w, in.op0(3), l) != 0 : false;
    write(w, dst[0], l, combine(in.combine, v, c));
    if (dst.size() > 1) write(w, dst[1], l, combine(in.combine, !v, c));
  });
}

}  // namespace warpforge::sim
