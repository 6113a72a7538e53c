// The H100/H200's rcp, sqrt, rsqrt and ex2 .approx.f32 (SASS MUFU), bit for
// bit: each is the unit's result for the operand's reduced form (the
// significand, with the exponent's parity for the square roots; the
// fixed-point fraction for ex2) from its recorded table (mufu_table.hpp:
// a smooth fit of the unit's error plus the recorded residual), the
// exponent then applied exactly. The tables cover every input of the
// reduced domains, recorded on an H200 (scripts/gpu-triton-mufu.sh,
// tools/difftest/mufu_tables.py); the recordings' other sets (every
// exponent, both signs, the forms without .ftz, finer and larger ex2
// operands) are what the rules below were checked on (docs/SIMULATOR.md).
#include <bit>
#include <cmath>
#include <span>

#include "approx_functions.hpp"
#include "float_format.hpp"
#include "mufu_table.hpp"
#include "warpforge/error.hpp"

// The tables, embedded in the library's read-only data (CMakeLists.txt
// passes their folder and a digest of their bytes, so that a changed table
// is compiled again).
#define WARPFORGE_MUFU_TABLE(name)                                                              \
  asm(".section .rodata\n.balign 16\n.hidden warpforge_mufu_" #name                             \
      "\n.globl warpforge_mufu_" #name "\nwarpforge_mufu_" #name                                \
      ":\n.incbin \"" WARPFORGE_MUFU_DIR "/" #name ".wfmc\"\n.hidden warpforge_mufu_" #name     \
      "_end\n.globl warpforge_mufu_" #name "_end\nwarpforge_mufu_" #name "_end:\n.previous\n"); \
  extern "C" const std::uint8_t warpforge_mufu_##name[], warpforge_mufu_##name##_end[];
WARPFORGE_MUFU_TABLE(rcp)
WARPFORGE_MUFU_TABLE(rsqrt)
WARPFORGE_MUFU_TABLE(sqrt)
WARPFORGE_MUFU_TABLE(ex2)
#undef WARPFORGE_MUFU_TABLE

namespace warpforge::sim {

namespace {

constexpr std::uint32_t kSign = 0x80000000u, kInf = 0x7F800000u, kOne = 0x3F800000u;
constexpr std::uint32_t kMantissa = 0x7FFFFFu;
static_assert(WARPFORGE_MUFU_DIGEST[0] != 0);  // set with the folder, by CMakeLists.txt

// A table, decoded on first use (16 MiB at most).
template <const std::uint8_t* kBegin, const std::uint8_t* kEnd, std::uint32_t kEntries>
const MufuTable& table() {
  static const MufuTable t =
      decode_mufu_table(std::span(kBegin, static_cast<std::size_t>(kEnd - kBegin)), kEntries);
  return t;
}
const MufuTable& rcp_table() {
  return table<warpforge_mufu_rcp, warpforge_mufu_rcp_end, 1u << 23>();
}
const MufuTable& rsqrt_table() {
  return table<warpforge_mufu_rsqrt, warpforge_mufu_rsqrt_end, 1u << 24>();
}
const MufuTable& sqrt_table() {
  return table<warpforge_mufu_sqrt, warpforge_mufu_sqrt_end, 1u << 24>();
}
const MufuTable& ex2_table() {
  return table<warpforge_mufu_ex2, warpforge_mufu_ex2_end, 1u << 24>();
}

// v·2^e for a positive normal f32 v, rounded to nearest (subnormal or
// infinite where it leaves the normal range).
std::uint32_t scaled(float v, int e) {
  return static_cast<std::uint32_t>(
      bits_of(static_cast<float>(std::ldexp(static_cast<long double>(v), e))));
}

// rcp of a normal operand: of 1.m from the table, then the exponent.
std::uint32_t rcp(std::uint32_t a) {
  const std::uint32_t m = a & kMantissa;
  const int e = static_cast<int>((a >> 23) & 0xFF) - 127;
  const double y = f32_of(kOne | m);
  return (a & kSign) | scaled(rcp_table().result(m, 1.0 / y), -e);
}

// rsqrt and sqrt of a positive normal operand: of y = 1.m or 2·1.m (the
// exponent's parity; the tables' index is the parity, then m), then
// 2^∓(e/2).
std::uint32_t square_root(Op op, std::uint32_t a) {
  const std::uint32_t m = a & kMantissa;
  const int e = static_cast<int>((a >> 23) & 0xFF) - 127;
  const int odd = e & 1;
  const double y = static_cast<double>(f32_of(kOne | m)) * (1 + odd);
  const std::uint32_t index = static_cast<std::uint32_t>(odd) << 23 | m;
  const int half = (e - odd) / 2;
  if (op == Op::rsqrt) return scaled(rsqrt_table().result(index, 1.0 / std::sqrt(y)), -half);
  return scaled(sqrt_table().result(index, std::sqrt(y)), half);
}

// ex2 of a finite operand: the unit reads x cut toward zero to a multiple
// of 2^-23, k·2^-23, as n + r with n = k/2^23 cut toward zero and r of x's
// sign, |r| < 1 (so 2^r of a negative x is the table's [-1, 0) half): 2^r
// from the table, then 2^n.
// Below -126, whose results are subnormal, the GPU squares ex2(x/2) (which
// the .ftz forms then flush, as they would the unit's own result).
std::uint32_t ex2(std::uint32_t a) {
  const double x = f32_of(a);
  if (x >= 128) return kInf;
  if (x <= -300) return 0;
  if (x < -126) {
    const float half = f32_of(ex2(static_cast<std::uint32_t>(bits_of(static_cast<float>(x / 2)))));
    return static_cast<std::uint32_t>(bits_of(half * half));
  }
  const double k = std::trunc(x * 0x1p23);  // exact: x·2^23 has at most 24 significant bits
  const double n = std::trunc(k * 0x1p-23);
  const double r = k - n * 0x1p23;  // in (-2^23, 2^23)
  const double fraction = r * 0x1p-23;
  const float v =
      ex2_table().result(static_cast<std::uint32_t>(r + 0x1p23),
                         static_cast<double>(std::exp2(static_cast<long double>(fraction))));
  return scaled(v, static_cast<int>(n));
}

}  // namespace

std::uint32_t mufu_approx_f32(Op op, std::uint32_t a) {
  const std::uint32_t magnitude = a & ~kSign;
  const bool negative = (a & kSign) != 0;
  if (magnitude > kInf) return kF32.nan_bits;
  switch (op) {
    case Op::rcp:
      if (magnitude == 0) return (a & kSign) | kInf;
      if (magnitude == kInf) return a & kSign;
      if (magnitude < 0x00800000u)  // subnormal: scaled by 2^24 first
        return (a & kSign) |
               scaled(f32_of(rcp(static_cast<std::uint32_t>(bits_of(f32_of(magnitude) * 0x1p24f)))),
                      24);
      return rcp(a);
    case Op::sqrt:
    case Op::rsqrt:
      if (magnitude == 0) return op == Op::sqrt ? a : (a & kSign) | kInf;
      if (negative) return kF32.nan_bits;
      if (magnitude == kInf) return op == Op::sqrt ? kInf : 0;
      if (magnitude < 0x00800000u)
        return scaled(f32_of(square_root(
                          op, static_cast<std::uint32_t>(bits_of(f32_of(magnitude) * 0x1p24f)))),
                      op == Op::sqrt ? -12 : 12);
      return square_root(op, a);
    case Op::ex2:
      if (magnitude == kInf) return negative ? 0 : kInf;
      return ex2(a);
    default:
      throw SimError("mufu_approx_f32: not rcp, sqrt, rsqrt or ex2");
  }
}

}  // namespace warpforge::sim
