// The PTX types under short names, so kernels read like the PTX they emit:
// `k.reg(u32)`, `k.ld(Space::global, f32, x, at(p))`.
#pragma once

#include "warpforge/ptx/target.hpp"
#include "warpforge/ptx/types.hpp"
#include "warpforge/ptx/variable.hpp"

namespace warpforge::dsl {

using ptx::Space;
using ptx::Target;
using ptx::Type;

inline constexpr Type pred = Type::pred;
inline constexpr Type b8 = Type::b8, b16 = Type::b16, b32 = Type::b32, b64 = Type::b64,
                      b128 = Type::b128;
inline constexpr Type u8 = Type::u8, u16 = Type::u16, u32 = Type::u32, u64 = Type::u64;
inline constexpr Type s8 = Type::s8, s16 = Type::s16, s32 = Type::s32, s64 = Type::s64;
inline constexpr Type f16 = Type::f16, f16x2 = Type::f16x2, bf16 = Type::bf16,
                      bf16x2 = Type::bf16x2, tf32 = Type::tf32, f32 = Type::f32, f64 = Type::f64;
inline constexpr Type e4m3 = Type::e4m3, e5m2 = Type::e5m2, e4m3x2 = Type::e4m3x2,
                      e5m2x2 = Type::e5m2x2;

}  // namespace warpforge::dsl
