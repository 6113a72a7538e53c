#include "warpforge/dsl/isa/convert.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::mod;
using detail::O;
using detail::type_name;

namespace {

bool is_fp8(Type t) { return t == Type::e4m3 || t == Type::e5m2 || t == Type::e4m3x2 || t == Type::e5m2x2; }

// PTX ISA 9.7.9.21, "Target ISA notes": bf16 results and tf32 need sm_80,
// fp8 needs sm_89, and a bf16 *source* (cvt.f32.bf16) needs sm_90.
// A bf16 result from anything but f32 (cvt.rn.bf16.f16, cvt.rn.bf16.s32 ...)
// and tf32 with .rn/.rz came with PTX 7.8 and also need sm_90.
Availability cvt_availability(Type d, Type a, Round r = Round::none) {
  if (is_fp8(d) || is_fp8(a)) return Availability::since(89);
  if (a == Type::bf16 || a == Type::bf16x2) return Availability::since(90);
  if ((d == Type::bf16 || d == Type::bf16x2) && a != Type::f32) return Availability::since(90);
  if (d == Type::tf32 && r != Round::rna) return Availability::since(90);
  if (d == Type::bf16 || d == Type::bf16x2 || d == Type::tf32) return Availability::since(80);
  return Availability::since(0);
}

// cvt[.rnd][.ftz][.sat][.relu][.satfinite].dtype.atype
ptx::Instruction cvt_form(const CvtMode& m, Type dtype, Type atype) {
  ptx::Instruction form{O::cvt};
  if (m.round != Round::none) form.modifiers.push_back(mod(m.round));
  if (m.ftz) form.modifiers.push_back(M::ftz);
  if (m.sat) form.modifiers.push_back(M::sat);
  if (m.relu) form.modifiers.push_back(M::relu);
  if (m.satfinite) form.modifiers.push_back(M::satfinite);
  form.modifiers.push_back(mod(dtype));
  form.modifiers.push_back(mod(atype));
  return form;
}

bool is_float_scalar(Type t) { return ptx::is_float(t) && !is_fp8(t); }

}  // namespace

void ConvertOps::cvt(const Reg& d, const Reg& a, CvtMode m) { cvt(d.type(), a.type(), d, a, m); }

void ConvertOps::cvt(Type dtype, Type atype, const Reg& d, const Src& a, CvtMode m) {
  const ptx::Instruction base = cvt_form({}, dtype, atype);
  if (is_fp8(dtype) || is_fp8(atype) || dtype == Type::f16x2 || dtype == Type::bf16x2)
    fail(base, "packed and fp8 conversions are cvt_pack / cvt_unpack_fp8");
  if (dtype == Type::pred || atype == Type::pred) fail(base, "predicates are converted with selp / setp");
  bool dfloat = is_float_scalar(dtype), afloat = is_float_scalar(atype);
  bool int_round = m.round == Round::rni || m.round == Round::rzi || m.round == Round::rmi || m.round == Round::rpi;
  // Check the mode the caller asked for, then fill in the pair's default
  // (checking after the default was filled refused every defaulted float->int cvt).
  if (m.round != Round::none) {
    if (!dfloat && !afloat)
      fail(base, "integer-to-integer conversion takes no rounding mode, got ." + std::string(dsl::name(m.round)));
    // PTX ISA 9.7.9.21: widening float->float is exact (no mode); narrowing
    // takes a float mode; a same-type cvt rounds to an integral value (irnd).
    if (dfloat && afloat && ptx::bits(dtype) > ptx::bits(atype))
      fail(base, "widening " + type_name(atype) + " to " + type_name(dtype) + " is exact and takes no rounding mode");
    if (dfloat && afloat && ptx::bits(dtype) < ptx::bits(atype) && int_round)
      fail(base, "narrowing " + type_name(atype) + " to " + type_name(dtype) +
                     " takes a float rounding mode (rn, rz, rm, rp), got ." + std::string(dsl::name(m.round)));
    if (dfloat && afloat && dtype == atype && !int_round)
      fail(base, "a " + type_name(dtype) + " to " + type_name(dtype) +
                     " cvt rounds to an integral value: rni, rzi, rmi or rpi, got ." + std::string(dsl::name(m.round)));
    if (!dfloat && afloat && !int_round)
      fail(base, "float-to-integer conversion needs an integer rounding mode (rni, rzi, rmi, rpi), got ." +
                     std::string(dsl::name(m.round)));
    if (dfloat && !afloat && int_round)
      fail(base, "integer-to-float conversion takes a float rounding mode (rn, rz, rm, rp), got ." +
                     std::string(dsl::name(m.round)));
  } else if (dtype == Type::tf32) {
    m.round = Round::rna;  // PTX ISA 9.7.9.21: .rna is the tf32 rounding every target has (.rn/.rz: sm_90)
  } else if (dfloat && afloat && ptx::bits(dtype) < ptx::bits(atype)) {
    m.round = Round::rn;
  } else if (dfloat && !afloat) {
    m.round = Round::rn;
  } else if (!dfloat && afloat) {
    m.round = Round::rzi;
  }
  // .sat clamps to the destination's range; ptxas refuses it where that range
  // already holds every source value (cvt.sat.u32.u16, cvt.sat.s64.s32 ...),
  // PTX ISA 9.7.9.21 "Saturation modifier".
  if (m.sat && !dfloat && !afloat) {
    bool holds_all = ptx::bits(dtype) > ptx::bits(atype) && (ptx::is_signed(dtype) || !ptx::is_signed(atype));
    if (holds_all || dtype == atype)
      fail(base, ".sat cannot clamp: every " + type_name(atype) + " value fits in " + type_name(dtype));
  }
  if (dtype == Type::tf32 && (atype != Type::f32 || (m.round != Round::rna && m.round != Round::rn &&
                                                      m.round != Round::rz)))
    fail(base, "tf32 results come from f32 with .rna (or .rn/.rz on sm_90+), got ." + std::string(dsl::name(m.round)));
  // PTX ISA 9.7.9.21: .ftz needs an f32 source or result; bf16 results
  // saturate with .satfinite, not .sat.
  if (m.ftz && dtype != Type::f32 && atype != Type::f32)
    fail(base, ".ftz applies to conversions from or to f32, not " + type_name(atype) + " to " + type_name(dtype));
  if (m.sat && dtype == Type::bf16) fail(base, ".sat does not apply to bf16 results (use .satfinite)");
  // PTX ISA 9.7.9.21: .relu clamps negative results of conversions to f16/bf16 only.
  if (m.relu && dtype != Type::f16 && dtype != Type::bf16)
    fail(base, ".relu applies to f16 and bf16 results, not " + type_name(dtype));
  const ptx::Instruction opcode = cvt_form(m, dtype, atype);
  require(opcode, cvt_availability(dtype, atype, m.round));
  // .satfinite on f16/bf16/tf32 results came with PTX ISA 8.1 (9.7.9.21); the
  // sm_80 target emits PTX 7.0 (ptx::ptx_version), so it is sm_89 and up here.
  if (m.satfinite) require(opcode, Availability::since(89));
  expect_type(opcode, d, dtype, "destination");
  expect_type(opcode, a, atype, "source");
  emit(opcode, {operand_of(d), operand_of(a)});
}

void ConvertOps::cvt_pack(Type packed, const Reg& d, const Src& hi, const Src& lo, CvtMode m) {
  const ptx::Instruction base = cvt_form({}, packed, Type::f32);
  if (packed == Type::f16x2 || packed == Type::bf16x2) {
    if (m.round != Round::rn && m.round != Round::rz)
      fail(base, "packing to " + type_name(packed) + " takes .rn or .rz");
    // PTX ISA 9.7.9.21: the packed f32 -> f16x2/bf16x2 forms take .relu and .satfinite only.
    if (m.ftz || m.sat) fail(base, "packing to " + type_name(packed) + " takes no .ftz or .sat");
  } else if (packed == Type::e4m3x2 || packed == Type::e5m2x2) {
    // PTX ISA 9.7.9.21: f32 -> fp8x2 is cvt.rn.satfinite{.relu}; nothing else is allowed.
    if (m.round != Round::rn) fail(base, "fp8 packing takes .rn");
    m.satfinite = true;
  } else {
    fail(base, "packed type " + type_name(packed) + "; expected f16x2, bf16x2, e4m3x2 or e5m2x2");
  }
  const ptx::Instruction opcode = cvt_form(m, packed, Type::f32);
  require(opcode, cvt_availability(packed, Type::f32));
  if (m.satfinite) require(opcode, Availability::since(89));  // PTX 8.1, as in cvt() above
  expect_type(opcode, d, ptx::bits(packed) == 16 ? Type::b16 : Type::b32, "destination");
  expect_type(opcode, hi, Type::f32, "source hi");
  expect_type(opcode, lo, Type::f32, "source lo");
  emit(opcode, {operand_of(d), operand_of(hi), operand_of(lo)});
}

void ConvertOps::cvt_unpack_fp8(Type fp8x2, const Reg& d, const Reg& a) {
  const ptx::Instruction opcode = cvt_form({.round = Round::rn}, Type::f16x2, fp8x2);
  if (fp8x2 != Type::e4m3x2 && fp8x2 != Type::e5m2x2)
    fail(opcode, "source type " + type_name(fp8x2) + "; expected e4m3x2 or e5m2x2");
  require(opcode, cvt_availability(Type::f16x2, fp8x2));
  expect_type(opcode, d, Type::b32, "destination");
  expect_type(opcode, a, Type::b16, "source");
  emit(opcode, {operand_of(d), operand_of(a)});
}

}  // namespace warpforge::dsl
