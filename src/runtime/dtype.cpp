#include "warpforge/runtime/dtype.hpp"

#include <array>

namespace warpforge::runtime {
namespace {

struct Info {
  DType type;
  std::string_view name;
  int bits;
};

constexpr std::array<Info, 15> kInfo{{
    {DType::f32, "f32", 32},  {DType::f16, "f16", 16}, {DType::bf16, "bf16", 16}, {DType::e4m3, "e4m3", 8},
    {DType::e5m2, "e5m2", 8}, {DType::e2m1, "e2m1", 4}, {DType::e8m0, "e8m0", 8},  {DType::i8, "i8", 8},
    {DType::u8, "u8", 8},     {DType::i16, "i16", 16}, {DType::i32, "i32", 32},   {DType::u32, "u32", 32},
    {DType::i64, "i64", 64},  {DType::u64, "u64", 64}, {DType::f64, "f64", 64},
}};

const Info& info(DType t) { return kInfo[static_cast<std::size_t>(t)]; }

}  // namespace

std::string_view name(DType t) { return info(t).name; }
int bits(DType t) { return info(t).bits; }

std::optional<DType> parse_dtype(std::string_view s) {
  for (const Info& i : kInfo)
    if (i.name == s) return i.type;
  return std::nullopt;
}

}  // namespace warpforge::runtime
