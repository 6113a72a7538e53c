#include "warpforge/ptx/types.hpp"

#include <array>
#include <utility>

namespace warpforge::ptx {
namespace {

struct TypeInfo {
  Type type;
  std::string_view name;
  int bits;
};

constexpr std::array<TypeInfo, 26> kTypes = {{
    {Type::pred, "pred", 1},     {Type::b8, "b8", 8},         {Type::b16, "b16", 16},
    {Type::b32, "b32", 32},      {Type::b64, "b64", 64},      {Type::b128, "b128", 128},
    {Type::u8, "u8", 8},         {Type::u16, "u16", 16},      {Type::u32, "u32", 32},
    {Type::u64, "u64", 64},      {Type::s8, "s8", 8},         {Type::s16, "s16", 16},
    {Type::s32, "s32", 32},      {Type::s64, "s64", 64},      {Type::f16, "f16", 16},
    {Type::f16x2, "f16x2", 32},  {Type::bf16, "bf16", 16},    {Type::bf16x2, "bf16x2", 32},
    {Type::tf32, "tf32", 32},    {Type::f32, "f32", 32},      {Type::f64, "f64", 64},
    {Type::e4m3, "e4m3", 8},     {Type::e5m2, "e5m2", 8},     {Type::e4m3x2, "e4m3x2", 16},
    {Type::e5m2x2, "e5m2x2", 16}, {Type::e2m1x2, "e2m1x2", 8},
}};

const TypeInfo& info(Type t) { return kTypes[static_cast<std::size_t>(t)]; }

}  // namespace

std::string_view name(Type t) { return info(t).name; }

std::optional<Type> parse_type(std::string_view text) {
  for (const auto& i : kTypes)
    if (i.name == text) return i.type;
  return std::nullopt;
}

int bits(Type t) { return info(t).bits; }

bool is_float(Type t) {
  switch (t) {
    case Type::f16: case Type::f16x2: case Type::bf16: case Type::bf16x2: case Type::tf32:
    case Type::f32: case Type::f64: case Type::e4m3: case Type::e5m2: case Type::e4m3x2:
    case Type::e5m2x2: case Type::e2m1x2:
      return true;
    default:
      return false;
  }
}

bool is_signed(Type t) {
  return t == Type::s8 || t == Type::s16 || t == Type::s32 || t == Type::s64;
}

bool is_unsigned(Type t) {
  return t == Type::u8 || t == Type::u16 || t == Type::u32 || t == Type::u64;
}

bool is_bits(Type t) {
  return t == Type::b8 || t == Type::b16 || t == Type::b32 || t == Type::b64 || t == Type::b128;
}

bool is_integer(Type t) { return is_signed(t) || is_unsigned(t) || is_bits(t); }

Type storage_type(Type t) {
  if (t == Type::pred || t == Type::f32 || t == Type::f64) return t;
  switch (bits(t)) {
    case 8:  // PTX has no 8-bit registers of use here; nvcc widens them to .b16
    case 16: return Type::b16;
    case 32: return Type::b32;
    case 64: return Type::b64;
    default: return Type::b128;
  }
}

}  // namespace warpforge::ptx
