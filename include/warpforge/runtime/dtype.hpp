// Element types of tensors. The low-precision ones follow the OCP
// Microscaling Formats (MX) v1.0 spec: e4m3 (the "fn" variant: no infinity,
// max 448), e5m2, e2m1 (4 bits, two per byte, the low nibble first) and
// e8m0 (an unsigned power-of-two scale).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace warpforge::runtime {

enum class DType : std::uint8_t { f32, f16, bf16, e4m3, e5m2, e2m1, e8m0, i8, u8, i16, i32, u32, i64, u64, f64 };

std::string_view name(DType t);                        // "bf16", "e2m1"
std::optional<DType> parse_dtype(std::string_view s);  // inverse of name()
int bits(DType t);                                     // 4 for e2m1, else 8..64

}  // namespace warpforge::runtime
