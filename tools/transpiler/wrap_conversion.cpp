// Conversions: cvt, its packed and unpacked forms.
#include "transpiler/cpp_names.hpp"
#include "transpiler/wrap_families.hpp"
#include "transpiler/wrap_operands.hpp"
#include "transpiler/wrap_sandbox.hpp"

namespace warpforge::transpiler::wrap {

namespace {

// cvt.rn[.satfinite].packed.f32 d, hi, lo: k.cvt_pack(packed, d, hi, lo, mode);
// cvt.rn.f16x2.fp8x2 d, a: k.cvt_unpack_fp8(fp8x2, d, a).
std::optional<Code> cvt_packed(const ptx::Instruction& inst, OperandWriter& ops) {
  auto dt = ptx::type_of(inst.modifiers[inst.modifiers.size() - 2]), at = type_modifier(inst);
  auto m = modes(leading(inst, 2), true);
  if (!dt || !at || !m) return std::nullopt;
  const auto& d = inst.operands[0];
  auto dst = ops.reg(d);
  if (!dst) return std::nullopt;
  if (inst.operands.size() == 2) {
    const auto& a = inst.operands[1];
    auto src = ops.reg(a);
    if (*dt != ptx::Type::f16x2 || !src || m->code != "{.round = Round::rn}") return std::nullopt;
    return checked(
        inst, ops,
        Code("k.cvt_unpack_fp8(" + dsl_type(*at) + ", ") + *dst + Code(", ") + *src + Code(");"),
        [&](Sandbox& b) { b.k().cvt_unpack_fp8(*at, b.reg(d), b.reg(a)); });
  }
  const auto &hi = inst.operands[1], &lo = inst.operands[2];
  auto srcs = sources({hi, lo}, ops);
  if (!srcs) return std::nullopt;
  const dsl::CvtMode mode{m->round, m->ftz, m->sat, m->satfinite, m->relu};
  return checked(inst, ops,
                 Code("k.cvt_pack(" + dsl_type(*dt) + ", ") + *dst + *srcs +
                     Code((m->code.empty() ? "" : ", " + m->code) + ");"),
                 [&](Sandbox& b) { b.k().cvt_pack(*dt, b.reg(d), b.src(hi), b.src(lo), mode); });
}

}  // namespace

// cvt[.modes].dtype.atype d, a: k.cvt(dtype, atype, d, a[, mode]).
std::optional<Code> cvt(const ptx::Instruction& inst, OperandWriter& ops) {
  if (inst.modifiers.size() < 2 || inst.operands.size() < 2 || inst.operands.size() > 3)
    return std::nullopt;
  if (auto packed = cvt_packed(inst, ops)) return packed;
  if (inst.operands.size() != 2) return std::nullopt;
  auto dt = ptx::type_of(inst.modifiers[inst.modifiers.size() - 2]), at = type_modifier(inst);
  auto m = modes(leading(inst, 2), true);
  const auto &d = inst.operands[0], &a = inst.operands[1];
  auto dst = ops.reg(d);
  auto src = sources({a}, ops);
  if (!dt || !at || !m || !dst || !src) return std::nullopt;
  const dsl::CvtMode mode{m->round, m->ftz, m->sat, m->satfinite, m->relu};
  return checked(inst, ops,
                 Code("k.cvt(" + dsl_type(*dt) + ", " + dsl_type(*at) + ", ") + *dst + *src +
                     Code((m->code.empty() ? "" : ", " + m->code) + ");"),
                 [&](Sandbox& b) { b.k().cvt(*dt, *at, b.reg(d), b.src(a), mode); });
}

}  // namespace warpforge::transpiler::wrap
