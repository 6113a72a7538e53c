// Integer operators and comparisons on registers. Each operator emits one
// instruction into the registers' kernel and returns a fresh register (or
// predicate): `Reg g = tid >> 2` emits `shr.u32 %r2, %r1, 2`. They are for
// integers only; float arithmetic is written with the explicit wrappers
// (k.add(d, a, b, {Round::rn}) ...), so rounding is always visible.
#pragma once

#include <concepts>

#include "warpforge/dsl/handles.hpp"

namespace warpforge::dsl {

Reg operator+(const Reg& a, const Src& b);
Reg operator-(const Reg& a, const Src& b);
Reg operator*(const Reg& a, const Src& b);  // mul.lo
Reg operator&(const Reg& a, const Src& b);
Reg operator|(const Reg& a, const Src& b);
Reg operator^(const Reg& a, const Src& b);
Reg operator<<(const Reg& a, const Src& b);
Reg operator>>(const Reg& a, const Src& b);  // arithmetic for signed types, logical otherwise
Reg operator~(const Reg& a);
Reg operator-(const Reg& a);

template <std::integral I>
Reg operator+(I a, const Reg& b) { return b + Src(a); }
template <std::integral I>
Reg operator*(I a, const Reg& b) { return b * Src(a); }

Pred operator<(const Reg& a, const Src& b);
Pred operator<=(const Reg& a, const Src& b);
Pred operator>(const Reg& a, const Src& b);
Pred operator>=(const Reg& a, const Src& b);
Pred operator==(const Reg& a, const Src& b);
Pred operator!=(const Reg& a, const Src& b);

Pred operator&&(const PredUse& a, const PredUse& b);  // and.pred (negations via not.pred first)
Pred operator||(const PredUse& a, const PredUse& b);  // or.pred

}  // namespace warpforge::dsl
