// PTX fundamental types (PTX ISA 5.2 "Types") plus the packed and
// low-precision element types that instructions name as modifiers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace warpforge::ptx {

enum class Type : std::uint8_t {
  pred,
  b8, b16, b32, b64, b128,
  u8, u16, u32, u64,
  s8, s16, s32, s64,
  f16, f16x2, bf16, bf16x2, tf32, f32, f64,
  e4m3, e5m2, e4m3x2, e5m2x2, e2m1x2,
};
inline constexpr int kTypeCount = static_cast<int>(Type::e2m1x2) + 1;

// The spelling without the leading dot: "u32", "bf16x2".
std::string_view name(Type t);
// Inverse of name(); nullopt for anything that is not a type.
std::optional<Type> parse_type(std::string_view text);

// Width in bits of a value of this type (pred counts as 1).
int bits(Type t);

bool is_float(Type t);     // f16 .. f64 and the fp8 forms, scalar or packed
bool is_signed(Type t);    // s8 .. s64
bool is_unsigned(Type t);  // u8 .. u64
bool is_bits(Type t);      // b8 .. b128
bool is_integer(Type t);   // signed, unsigned or untyped bits

// The type of register a value of this type lives in, as nvcc declares them:
// pred for predicates, f32/f64 for those floats, b16/b32/b64/b128 for the rest
// (f16 lives in a .b16 register, bf16x2 in a .b32 one, PTX ISA 5.2.3).
Type storage_type(Type t);

}  // namespace warpforge::ptx
